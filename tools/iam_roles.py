"""The roles the deploy identity is granted (docs/delivery.md, 4. Identities): what each holds,
which are broad, and the permissions of the custom roles the bootstrap creates."""

from __future__ import annotations

from components.platform.cluster import IMAGE_STREAMING_ROLE, NODE_ROLES
from components.platform.metrics_adapter import VIEWER_ROLE

# Which predefined role holds which permission, and how many: iann0036/iam-dataset@
# 2073fa52ac008a45477aa0b1b4580cd99135bf60:gcp/roles/<role>.json (a dump of Google Cloud's
# predefined roles, 2026-08-22); which permission an API method checks: the same commit,
# gcp/map.json (e.g. a node pool is created by container.projects.locations.clusters.nodePools.
# create, which checks container.clusters.update).
CLUSTER_ADMIN = "roles/container.clusterAdmin"
"""Clusters and node pools, and the DNS endpoint: container.clusters.{create,update,delete,get,
list,connect}, container.operations.{get,list} and resourcemanager.projects.get, and no
Kubernetes object (gcp/roles/container.clusterAdmin.json). container.admin would add every
Kubernetes object of every cluster in the project (Secrets included) through IAM; the objects come
from KUBERNETES_RBAC instead, bound in the stack's own cluster only."""
CONTAINER_ADMIN = "roles/container.admin"
"""Every container.* permission (434, a superset of CLUSTER_ADMIN's 15, and no iam.* one, so no
actAs), Kubernetes objects included: "IAM manages Google Cloud resources, including clusters, and
types of objects within clusters ... An IAM role grants privileges across all clusters in the
project" (GKE, "Access control", https://cloud.google.com/kubernetes-engine/docs/concepts/
access-control). Only for a stack whose every CI run creates its cluster anew (the real-cloud
test): no RBAC binding made by hand exists in a cluster that did not exist a minute ago."""
KUBERNETES_RBAC = "clusterrole/cluster-admin"
"""Kubernetes RBAC, not IAM: a ClusterRoleBinding of the deploy identity (a Google service account
is the Kubernetes user named by its email) to cluster-admin, in its own cluster. GKE allows a
request that either IAM or RBAC allows ("Authorize actions in clusters using role-based access
control", https://cloud.google.com/kubernetes-engine/docs/how-to/role-based-access-control).
cluster-admin, not a narrower role: the program creates ClusterRoles and their bindings (the
metrics adapter's), which RBAC allows only to holders of every permission granted, or of
escalate and bind."""
PROJECT_IAM_ADMIN = "roles/resourcemanager.projectIamAdmin"
"""Granted only with the condition of docs/delivery.md (deploy-grants.yaml): the identity may grant
or revoke GRANTABLE_PROJECT_ROLES and nothing else ("Set limits on granting roles",
https://cloud.google.com/iam/docs/setting-limits-on-granting-roles)."""
GRANTABLE_PROJECT_ROLES = (VIEWER_ROLE, *NODE_ROLES, IMAGE_STREAMING_ROLE)
"""The project roles the program binds: the metrics adapter's reader, and the roles of a node
account the stack creates. deploy-grants.yaml lists exactly these."""

# Service accounts. IAM Conditions cannot narrow a project-level grant to one account: resource
# attributes are recognized only for the services "Resource attributes for IAM Conditions" lists
# (https://cloud.google.com/iam/docs/conditions-resource-attributes, resource service values:
# Cloud Storage, Compute Engine, Cloud KMS, Resource Manager, GKE, ...; no iam.googleapis.com nor
# artifactregistry.googleapis.com in the versions read here, the newest only partly readable), so
# a `resource.name` condition on a service account is never matched. What the program does to
# the node account it creates, and what each call checks: hashicorp/terraform-provider-google@
# 0540ffede9083228e6d6177e2b50d3b91e5bde13:google/services/resourcemanager/
# resource_google_service_account.go (Create: serviceAccounts.create on projects/P, then get;
# Read: get; Delete: delete; Update: get and patch, never reached, as the display name changes
# only with the account id, which replaces it) and gcp/map.json above (iam.projects.
# serviceAccounts.{create,get,delete} -> iam.serviceAccounts.{create,get,delete}).
SERVICE_ACCOUNT_CREATOR = "roles/iam.serviceAccountCreator"
"""iam.serviceAccounts.{create,get,list} and resourcemanager.projects.{get,list}: creates accounts,
acts as none, administers none (gcp/roles/iam.serviceAccountCreator.json)."""
SERVICE_ACCOUNT_DELETER = "roles/iam.serviceAccountDeleter"
"""iam.serviceAccounts.{delete,get,list}: granted on the node account itself, so `pulumi destroy`
deletes that account and no other (gcp/roles/iam.serviceAccountDeleter.json)."""
SERVICE_ACCOUNT_USER = "roles/iam.serviceAccountUser"
"""The only predefined role with iam.serviceAccounts.actAs and nothing else to speak of: GKE asks
for it on a user-managed node account (https://cloud.google.com/iam/docs/roles-permissions/
container, Kubernetes Engine Admin); container.admin does not contain actAs."""
SERVICE_ACCOUNT_ADMIN = "roles/iam.serviceAccountAdmin"
"""On one service account only (setIamPolicy of that account), never the project: on the project
it sets the policy of, deletes and disables every account in it."""

# Custom roles: exactly the calls the Terraform provider behind pulumi-gcp makes for an IAM member
# resource (GET the policy, then write it back): hashicorp/terraform-provider-google@
# 1babe97f1e921e124bb5e83e703d3d9a0c3d0892:google/services/storage/iam_storage_bucket.go (GET and
# PUT b/BUCKET/iam) and @0937ec5ba25b4ce01df2705fbacee88aa96972c9:google/services/
# artifactregistry/iam_artifact_registry_repository.go (:getIamPolicy, :setIamPolicy); each call's
# permission from gcp/map.json above. roles/storage.admin holds 104 permissions (every object and
# setting of the bucket), roles/artifactregistry.admin 67 (every image of the repository).
BUCKET_IAM_ROLE = "projects/PROJECT_ID/roles/gkeGpuBucketIam"
BUCKET_IAM_PERMISSIONS = ("storage.buckets.getIamPolicy", "storage.buckets.setIamPolicy")
REGISTRY_IAM_ROLE = "projects/PROJECT_ID/roles/gkeGpuRegistryIam"
REGISTRY_IAM_PERMISSIONS = (
    "artifactregistry.repositories.getIamPolicy",
    "artifactregistry.repositories.setIamPolicy",
)

# Monitoring, one narrow role per kind of object StackMonitoring registers
# (components/service/monitoring.py: a Dashboard, NotificationChannels, AlertPolicies), instead
# of roles/monitoring.editor (80 permissions, writing time series and creating and deleting metric
# descriptors among them). Each holds 9 (gcp/roles/<role>.json above): its kind's create, get,
# list, update, delete and tag bindings; the channel editor also reads channel descriptors and
# sends and checks verification codes.
DASHBOARD_EDITOR = "roles/monitoring.dashboardEditor"
ALERT_POLICY_EDITOR = "roles/monitoring.alertPolicyEditor"
NOTIFICATION_CHANNEL_EDITOR = "roles/monitoring.notificationChannelEditor"

NETWORK_ROLE = "projects/PROJECT_ID/roles/gkeGpuNetwork"
"""A custom role with exactly NETWORK_PERMISSIONS, instead of compute.networkAdmin (965
permissions: every network, firewall, route and peering of the project)."""
# What the Terraform provider behind pulumi-gcp calls for each network resource, and what each call
# checks. Calls: hashicorp/terraform-provider-google@e03b7622a26cf4e878f90bdccaca6aa3d03a7999,
# google/services/compute/: resource_compute_router.go (POST, GET, PATCH, DELETE on the router),
# resource_compute_router_nat.go (a NAT is a part of its router: GET the router, PATCH it, also to
# delete), resource_compute_address.go (POST, GET, DELETE; POST setLabels when the address has
# labels, which pulumi-gcp's attribution label may add: unconfirmed), and compute_operation.go
# (QueryOp: every regional call is waited for with GET regions/R/operations/O). Checks:
# gcp/map.json above (compute.routers.insert -> routers.create; routers.patch -> routers.get +
# routers.update; addresses.insert -> addresses.create or createInternal; addresses.delete ->
# addresses.delete or deleteInternal; regionOperations.get -> regionOperations.get).
# compute.subnetworks.use for an internal address in a subnetwork is not in map.json; it is taken
# from Google's "Reserve a static internal IP" requirements and is unconfirmed here.
_OPERATIONS = ("compute.regionOperations.get",)
ROUTER_PERMISSIONS = (
    "compute.routers.create",
    "compute.routers.get",
    "compute.routers.update",
    "compute.routers.delete",
    *_OPERATIONS,
)
NAT_PERMISSIONS = ("compute.routers.get", "compute.routers.update", *_OPERATIONS)
EXTERNAL_ADDRESS_PERMISSIONS = (
    "compute.addresses.create",
    "compute.addresses.get",
    "compute.addresses.delete",
    "compute.addresses.setLabels",
    *_OPERATIONS,
)
INTERNAL_ADDRESS_PERMISSIONS = (
    "compute.addresses.createInternal",
    "compute.addresses.get",
    "compute.addresses.deleteInternal",
    "compute.addresses.setLabels",
    "compute.subnetworks.use",
    *_OPERATIONS,
)
NETWORK_PERMISSIONS = tuple(
    sorted(
        {
            *ROUTER_PERMISSIONS,
            *NAT_PERMISSIONS,
            *EXTERNAL_ADDRESS_PERMISSIONS,
            *INTERNAL_ADDRESS_PERMISSIONS,
        }
    )
)

CLOUD_ARMOR_ROLE = "projects/PROJECT_ID/roles/gkeGpuCloudArmor"
"""A custom role with exactly CLOUD_ARMOR_PERMISSIONS, instead of compute.securityAdmin (170
permissions: every firewall rule, firewall policy, SSL certificate and security policy of the
project; gcp/roles/compute.securityAdmin.json above), which Google names for managing Cloud Armor
policies ("Set up IAM permissions for Cloud Armor security policies",
https://cloud.google.com/armor/docs/configure-rate-limiting)."""
# What the Terraform provider behind pulumi-gcp calls for a security policy
# (hashicorp/terraform-provider-google@029bdc0674f3dd5bdb5b146bfe001ffd8a121b88:google/services/
# compute/resource_compute_security_policy.go: Insert, Get, Patch, AddRule, PatchRule, RemoveRule,
# Delete, each waited for as a global operation), and what each checks (gcp/map.json above:
# insert -> securityPolicies.create; get -> get; patch -> update + get; addRule, patchRule,
# removeRule -> update; delete -> delete; globalOperations.get -> globalOperations.get).
# compute.securityPolicies.setLabels: for the production label (components/platform/
# cloud_armor.py): the provider's update sets changed labels with SecurityPolicies.SetLabels
# (resourceComputeSecurityPolicyUpdate, same file and commit). compute.securityPolicies.use
# (attaching the policy to a backend service) is GKE's Gateway controller's call, not the deploy
# identity's.
# IAM Conditions: resource attributes work only for the services and resource types "Resource
# attributes for IAM Conditions" lists (https://cloud.google.com/iam/docs/conditions-resource-
# attributes: "Other services and resource types do not recognize resource attributes").
# compute.googleapis.com is listed, but the part of its type list read here (BackendService, Disk,
# Firewall, ForwardingRule, GlobalForwardingRule, Image, Instance, InstanceTemplate, ...) shows no
# SecurityPolicy, GlobalAddress nor SslPolicy, and the rest was not readable; certificatemanager
# and servicemanagement are not among its services, nor among those whose resource name
# conditions can control ("Configure resource-based access", https://cloud.google.com/iam/docs/
# configuring-resource-based-access). So no condition narrows CLOUD_ARMOR_ROLE, GATEWAY_ROLE or
# ENDPOINTS_ROLE to the stack's own objects: each is project-wide, and BROAD below says so.
CLOUD_ARMOR_PERMISSIONS = (
    "compute.globalOperations.get",
    "compute.securityPolicies.create",
    "compute.securityPolicies.delete",
    "compute.securityPolicies.get",
    "compute.securityPolicies.setLabels",
    "compute.securityPolicies.update",
)

GATEWAY_ROLE = "projects/PROJECT_ID/roles/gkeGpuGateway"
"""A custom role with exactly GATEWAY_PERMISSIONS, for expose.domain (components/expose/), instead
of roles/compute.publicIpAdmin (51 permissions: every address and public prefix of the project)
and roles/certificatemanager.editor (61, and no *.delete at all, so `pulumi destroy` and a domain
change were refused: gcp/roles/<role>.json above)."""
# What the Terraform provider behind pulumi-gcp calls (hashicorp/terraform-provider-google@
# e03b7622a26cf4e878f90bdccaca6aa3d03a7999, google/services/): compute/resource_compute_global_
# address.go (POST global/addresses, GET, POST setLabels after the create when the address has
# labels, DELETE), compute/resource_compute_ssl_policy.go (POST global/sslPolicies, GET, PATCH,
# DELETE; no labels), compute/compute_operation.go (each compute call waited for with GET
# global/operations/O), certificatemanager/resource_certificate_manager_{dns_authorization,
# certificate,certificate_map,certificate_map_entry}.go (POST, GET, PATCH, DELETE, each waited for
# with GET of its operation: certificate_manager_operation.go). What each call checks: gcp/map.json
# above (compute.globalAddresses.insert -> globalAddresses.create, get -> get, setLabels ->
# setLabels, delete -> delete; sslPolicies.insert -> create, get -> get, patch -> get + update,
# delete -> delete; globalOperations.get -> globalOperations.get; certificatemanager.projects.
# locations.{dnsAuthorizations,certificates,certificateMaps,certificateMaps.certificateMapEntries}
# .{create,get,patch,delete} -> certificatemanager.{dnsauthorizations,certs,certmaps,
# certmapentries}.{create,get,update + get,delete}; operations.get -> certificatemanager.operations.
# get). What map.json leaves out, from Certificate Manager's "Roles and permissions"
# (https://cloud.google.com/certificate-manager/docs/permissions): creating a certificate checks
# certificatemanager.dnsauthorizations.use on each DNS authorization it names, and creating a map
# entry certificatemanager.certs.use on each certificate it names. No *.list: the provider lists
# nothing. Unconfirmed: compute.globalAddresses.setLabels is needed only if pulumi-gcp labels the
# address (the provider's add_terraform_attribution_label defaults to true, google/provider/
# provider.go; pulumi-gcp's add_pulumi_attribution_label default was not read). Attaching the map,
# the address and the SSL policy to the load balancer (certmaps.use, globalAddresses.use,
# sslPolicies.use) is GKE's Gateway controller's call, not the deploy identity's.
_GLOBAL_OPERATIONS = ("compute.globalOperations.get",)
GLOBAL_ADDRESS_PERMISSIONS = (
    "compute.globalAddresses.create",
    "compute.globalAddresses.delete",
    "compute.globalAddresses.get",
    "compute.globalAddresses.setLabels",
    *_GLOBAL_OPERATIONS,
)
SSL_POLICY_PERMISSIONS = (
    "compute.sslPolicies.create",
    "compute.sslPolicies.delete",
    "compute.sslPolicies.get",
    "compute.sslPolicies.update",
    *_GLOBAL_OPERATIONS,
)


CERTIFICATE_OPERATION = "certificatemanager.operations.get"
USE_DNS_AUTHORIZATION = "certificatemanager.dnsauthorizations.use"
"""Only for a certificate that names DNS authorizations (not for a Cloud Endpoints name's)."""


def _certificate_manager(kind: str, *more: str) -> tuple[str, ...]:
    verbs = ("create", "delete", "get", "update")
    return (*(f"certificatemanager.{kind}.{v}" for v in verbs), *more, CERTIFICATE_OPERATION)


DNS_AUTHORIZATION_PERMISSIONS = _certificate_manager("dnsauthorizations")
CERTIFICATE_PERMISSIONS = _certificate_manager("certs", USE_DNS_AUTHORIZATION)
CERTIFICATE_MAP_PERMISSIONS = _certificate_manager("certmaps")
CERTIFICATE_MAP_ENTRY_PERMISSIONS = _certificate_manager(
    "certmapentries", "certificatemanager.certs.use"
)
_CERTIFICATE = "the Gateway's managed certificate"
GATEWAY_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "gcp:compute/globalAddress:GlobalAddress": (
        "the Gateway's global address",
        GLOBAL_ADDRESS_PERMISSIONS,
    ),
    "gcp:compute/sSLPolicy:SSLPolicy": ("the Gateway's SSL policy", SSL_POLICY_PERMISSIONS),
    "gcp:certificatemanager/dnsAuthorization:DnsAuthorization": (
        _CERTIFICATE,
        DNS_AUTHORIZATION_PERMISSIONS,
    ),
    "gcp:certificatemanager/certificate:Certificate": (_CERTIFICATE, CERTIFICATE_PERMISSIONS),
    "gcp:certificatemanager/certificateMap:CertificateMap": (
        _CERTIFICATE,
        CERTIFICATE_MAP_PERMISSIONS,
    ),
    "gcp:certificatemanager/certificateMapEntry:CertificateMapEntry": (
        _CERTIFICATE,
        CERTIFICATE_MAP_ENTRY_PERMISSIONS,
    ),
}
"""Each type a Gateway registers, what for, and what it asks of GATEWAY_ROLE: create, read,
update, delete, the operation it waits on, and `use` of what it names."""
GATEWAY_PERMISSIONS = tuple(sorted({p for _, held in GATEWAY_TYPES.values() for p in held}))

ENDPOINTS_ROLE = "projects/PROJECT_ID/roles/gkeGpuEndpoints"
"""A custom role with exactly ENDPOINTS_PERMISSIONS, for expose.domain: auto, instead of
roles/servicemanagement.admin (34 permissions: setIamPolicy of every managed service of the
project among them; gcp/roles/servicemanagement.admin.json above)."""
# What the provider calls for google_endpoints_service (hashicorp/terraform-provider-google@
# e03b7622a26cf4e878f90bdccaca6aa3d03a7999:google/services/servicemanagement/
# resource_endpoints_service.go): Create looks the service up (Services.Get; an existing one is
# reused), creates it if that fails (Services.Create), then rolls the config out as Update does
# (Services.Configs.Submit, Services.Rollouts.Create), each waited for with Operations.Get
# (serviceman_operation.go); Read: Services.GetConfig; Delete: Services.Delete, which the program
# asks for (components/platform/gateway_name.py: ENDPOINTS_DELETION_POLICY "DELETE", so the name
# never points at a released address), skipped only for deletion_policy ABANDON
# (tpgresource.DeletionPolicyPreDelete, google/tpgresource/utils.go). What each checks
# (gcp/map.json above): services.get, getConfig -> services.get; services.create -> create;
# configs.submit, rollouts.create -> update; delete (and undelete, the owner's `gcloud endpoints
# services undelete` within 30 days) -> delete. Unconfirmed: servicemanagement.operations.get, for
# which map.json names no permission. No servicemanagement.services.bind: the provider enables no
# service for a consumer.
ENDPOINTS_DELETE = "servicemanagement.services.delete"
"""Asked only of a service whose deletionPolicy is not ABANDON."""
ENDPOINTS_PERMISSIONS = (
    "servicemanagement.services.create",
    ENDPOINTS_DELETE,
    "servicemanagement.services.get",
    "servicemanagement.services.update",
)

CUSTOM_ROLES: dict[str, tuple[str, ...]] = {
    NETWORK_ROLE: NETWORK_PERMISSIONS,
    CLOUD_ARMOR_ROLE: CLOUD_ARMOR_PERMISSIONS,
    GATEWAY_ROLE: GATEWAY_PERMISSIONS,
    ENDPOINTS_ROLE: ENDPOINTS_PERMISSIONS,
    BUCKET_IAM_ROLE: BUCKET_IAM_PERMISSIONS,
    REGISTRY_IAM_ROLE: REGISTRY_IAM_PERMISSIONS,
}
"""Each custom role's permissions: docs/delivery.md's `gcloud iam roles create` lists the same."""

BROAD: dict[str, tuple[str, str]] = {
    SERVICE_ACCOUNT_CREATOR: (
        "creates any service account in the project",
        "name a node account made by the bootstrap in cluster.nodeServiceAccount",
    ),
    PROJECT_IAM_ADMIN: (
        f"grants {', '.join(GRANTABLE_PROJECT_ROLES)} to any principal on the whole project",
        "a node account named in cluster.nodeServiceAccount takes the node roles off this list",
    ),
    CONTAINER_ADMIN: (
        "reaches every Kubernetes object of every cluster in the project, Secrets included",
        "keep the project for this stack alone",
    ),
    GATEWAY_ROLE: (
        "updates and deletes every global address, SSL policy and Certificate Manager "
        "certificate, certificate map and DNS authorization in the project, other stacks' too",
        "keep the project for this stack alone (no IAM condition narrows it: tools/iam_roles.py)",
    ),
    ENDPOINTS_ROLE: (
        "rolls out a new configuration to, and deletes, every Cloud Endpoints service in the "
        "project",
        "name your own domain in expose.domain instead of auto, or keep the project for this "
        "stack alone",
    ),
    CLOUD_ARMOR_ROLE: (
        "updates and deletes every Cloud Armor security policy in the project, other stacks' too",
        "keep the project for this stack alone (a resource.name condition was not confirmed to "
        "apply: docs/delivery.md)",
    ),
}
"""Project-wide grants that reach beyond what the stack owns: what each reaches, and how to do
without it. The plan lists them for every stack, and warns (`!`) for a stack that CI deploys
(tools.stacks.ci_deployment)."""
