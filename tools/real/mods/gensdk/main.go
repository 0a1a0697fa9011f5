// gensdk writes a package's SDK for one language with Pulumi's own code generators
// (github.com/pulumi/pulumi/pkg/v3/codegen/{nodejs,go,python}), the code `pulumi package add` and
// `gen-sdk` reach through a language host's GeneratePackage call; the SDK is the one `package add`
// writes (see run).
//
// Why this program exists: `pulumi package gen-sdk` asks the language host (pulumi-language-nodejs,
// -go, -python) to generate, and the Go module proxy serves none of those hosts
// (github.com/pulumi/pulumi/sdk/{nodejs/cmd/pulumi-language-nodejs,go/pulumi-language-go,
// python/cmd/pulumi-language-python}/v3: "This module version is not available" at every version
// asked, 2026-11-29). This is the hosts' thin wrapper, written again: bind the schema with the
// plugin loader (so references to other packages, such as kubernetes, resolve through the
// installed provider plugins, as in the hosts), call the generator, write the files. The
// generators themselves are Pulumi's, at the version in go.mod.
//
// Usage: gensdk <schema.json> <nodejs|go|python> <out-dir>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pkghost "github.com/pulumi/pulumi/pkg/v3/host"
	"github.com/pulumi/pulumi/pkg/v3/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag/colors"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gensdk <schema.json> <nodejs|go|python> <out-dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "gensdk:", err)
		os.Exit(1)
	}
}

func run(schemaPath, language, out string) error {
	raw, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	sink := diag.DefaultSink(os.Stderr, os.Stderr, diag.FormatOptions{Color: colors.Never})
	// The plugin host `pulumi package get-schema` makes (pkg/cmd/pulumi/packagecmd/
	// package_extract_schema.go), without what only language plugins use: at v3.274.1
	// plugin.NewContext panics without one ("An assertion has failed: host cannot be nil").
	host, err := pkghost.New(context.Background(), sink, sink, nil, nil,
		schema.NewLoaderServerFromContext, nil, nil)
	if err != nil {
		return err
	}
	defer host.Close()
	pctx, err := plugin.NewContext(context.Background(), sink, sink, host, nil, cwd, nil, false, nil, nil)
	if err != nil {
		return err
	}
	defer pctx.Close()
	loader := schema.NewPluginLoader(pctx)
	// Bound and generated as `pulumi package add` does (pkg/cmd/pulumi/packages/packages.go,
	// InstallPackage and BindSpecWithContext, v3.274.1): dangling type references allowed,
	// SupportPack on ("We _always_ want SupportPack turned on for `package add`": the Go SDK gets
	// its go.mod, the Python SDK its pyproject.toml), and a local SDK (generate: the Node.js SDK
	// compiles itself in its postinstall script, its main bin/index.js).
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		return diags
	}
	pkg.SupportPack = true
	files, err := generate(language, pkg, loader)
	if err != nil {
		return err
	}
	for name, content := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("gensdk: %d %s files in %s\n", len(files), language, out)
	return nil
}

func generate(language string, pkg *schema.Package, loader schema.ReferenceLoader) (map[string][]byte, error) {
	const tool = "pulumi"
	switch language {
	case "nodejs":
		return nodejs.GeneratePackage(tool, pkg, nil, nil, true, loader)
	case "go":
		return gogen.GeneratePackage(tool, pkg, nil)
	case "python":
		return python.GeneratePackage(tool, pkg, nil, loader)
	}
	return nil, fmt.Errorf("language %q: one of nodejs, go, python", language)
}
