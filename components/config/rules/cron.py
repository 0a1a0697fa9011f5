"""`schedule` as the API server checks a CronJob's: `cron.ParseStandard` and the time-zone rule.

Kubernetes' CronJob validation (pkg/apis/batch/validation/validation.go, validateScheduleFormat,
read in yongruilin/kubernetes at 088d1158, a fork of kubernetes/kubernetes; go.mod there pins
github.com/robfig/cron/v3 v3.0.1) refuses a schedule that `cron.ParseStandard` cannot parse, and
on create any schedule containing "TZ" ("cannot use TZ or CRON_TZ in schedule, use timeZone field
instead"). ParseStandard is robfig/cron v3.0.1 parser.go (tag v3.0.1, ccba498c) with the options
Minute | Hour | Dom | Month | Dow | Descriptor; the bounds are spec.go's: minute 0-59, hour 0-23,
day of month 1-31, month 1-12 or jan-dec, day of week 0-6 or sun-sat (names in any case).

`problem` follows parser.go's getRange line by line (a `*` or `?` start ignores what follows its
hyphen; `N/step` runs from N to the field's maximum; numbers are strconv.Atoi's: an optional sign,
ASCII digits). Three things it takes that refuse here, each a mistake Kubernetes would keep:
white space other than spaces and tabs, or around the schedule (strings.Fields drops a trailing
newline, often a YAML `|` block's, but the CronJob keeps the text as written); an empty item
between commas (FieldsFunc drops it: a field of commas alone never fires); and `@every` under a
second (robfig's Every rounds it up to a Job every second).
"""

from __future__ import annotations

import re

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (name, minimum, maximum, names) of each field, in order (robfig/cron spec.go bounds).
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate(_MONTHS)}),
    ("day of week", 0, 6, {d: i for i, d in enumerate(_DAYS)}),
)
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
EVERY = "@every "
# Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+ with these units, or a bare 0.
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1,
    "m": 60,
    "h": 3600,
}
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_INT64_MAX = 2**63 - 1
ALLOWED = (
    "five fields, minute (0-59) hour (0-23) day-of-month (1-31) month (1-12 or jan-dec) "
    "day-of-week (0-6 or sun-sat), each *, a value, a range a-b, a list a,b or a step */n or a-b/n "
    "(n at least 1); or @yearly, @monthly, @weekly, @daily, @hourly or @every <duration>"
)


class _Refused(Exception):
    pass


def problem(schedule: str) -> str | None:
    """Why the API server (or this stricter reading, above) refuses `schedule`, else None."""
    if "TZ" in schedule:
        return (
            "it sets its time zone inside the schedule (TZ= or CRON_TZ=), which Kubernetes "
            "refuses in a new CronJob: use the workload's timeZone key instead"
        )
    if schedule != schedule.strip(" \t") or re.search(r"[^\S \t]", schedule):
        return (
            "it has a line break, white space other than spaces and tabs, or space before or "
            "after it (a YAML `|` block adds a trailing newline): write it on one line"
        )
    try:
        if schedule.startswith("@"):
            _descriptor(schedule)
        else:
            fields = schedule.split()
            if len(fields) != len(FIELDS):
                raise _Refused(f"it has {len(fields)} fields, and a schedule has five fields")
            for text, (name, low, high, names) in zip(fields, FIELDS, strict=True):
                _field(text, name, low, high, names)
    except _Refused as refused:
        return str(refused)
    return None


def _descriptor(schedule: str) -> None:
    if schedule in DESCRIPTORS:
        return
    if not schedule.startswith(EVERY):
        raise _Refused(
            f"{schedule.split()[0]!r} is not a descriptor Kubernetes knows: @yearly, @annually, "
            "@monthly, @weekly, @daily, @midnight, @hourly or @every <duration>"
        )
    seconds = _duration(schedule[len(EVERY) :])
    if seconds is None:
        raise _Refused("@every takes a Go duration, e.g. '@every 1h30m'")
    if seconds < 1:
        raise _Refused(
            "@every under a second: Kubernetes' parser rounds it up to a Job every second"
        )


def _duration(text: str) -> float | None:
    """Seconds in a Go duration (time.ParseDuration), else None."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    parts = _PART.findall(body)
    if not body or "".join(number + unit for number, unit in parts) != body:
        return None
    total = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)
    if total * 1e9 > _INT64_MAX:
        return None
    return -total if text.startswith("-") else total


def _field(text: str, name: str, low: int, high: int, names: dict[str, int]) -> None:
    items = text.split(",")
    if any(not item for item in items):
        raise _Refused(f"the {name} field {text!r} has an empty item between commas")
    for item in items:
        _range(item, name, low, high, names)


def _range(expr: str, name: str, low: int, high: int, names: dict[str, int]) -> None:
    """robfig/cron v3.0.1 parser.go getRange: number | number "-" number [ "/" number ]."""
    where = f"the {name} field's {expr!r}"
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _number(low_and_high[0], where, names)
        if len(low_and_high) > 2:
            raise _Refused(f"{where} has too many hyphens")
        end = _number(low_and_high[1], where, names) if len(low_and_high) == 2 else start
    step = 1
    if len(range_and_step) > 2:
        raise _Refused(f"{where} has too many slashes")
    if len(range_and_step) == 2:
        step = _number(range_and_step[1], where, {})
        if len(low_and_high) == 1:
            end = high  # "N/step" runs from N to the field's maximum
    if start < low:
        raise _Refused(f"{where} starts at {start}, below {low}")
    if end > high:
        raise _Refused(f"{where} goes to {end}, above {high}")
    if start > end:
        raise _Refused(f"{where} starts at {start}, beyond its end {end}")
    if step == 0:
        raise _Refused(f"{where} has a step of 0: a step is 1 or more")


def _number(text: str, where: str, names: dict[str, int]) -> int:
    """parseIntOrName: a name of the field (any case), else strconv.Atoi, not negative."""
    if text.lower() in names:
        return names[text.lower()]
    if not re.fullmatch(r"[+-]?[0-9]+", text, flags=re.ASCII):
        what = "a number or a name" if names else "a number"
        raise _Refused(f"in {where}, {text!r} is not {what}")
    number = int(text)
    if number > _INT64_MAX or number < -_INT64_MAX - 1:
        raise _Refused(f"{where} has {text}, out of range")
    if number < 0:
        raise _Refused(f"{where} has the negative number {number}")
    return number
