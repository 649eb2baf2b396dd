package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

const pkgPlugin = "github.com/svcrun/svc/runtime/plugin"

// PluginOptions configure Plugin.
type PluginOptions struct {
	Package string
	// Name is the plugin's name (svcgen -plugin).
	Name string
	// Extensions is the extensions folder relative to the package folder,
	// slash-separated, embedded and served by Extensions(); empty for none.
	Extensions string
	// Brand is the brand the document was generated for, and Rebrand the
	// groups of its paths that follow the server's brand (plugin.api.<brand>
	// for version-only routes).
	Brand   string
	Rebrand []string
	// Register adds the Plugin type, embedding Base, and registers it from
	// init, so the package writes only Plugin's Start method.
	Register bool
}

// Plugin returns the file of what every plugin writes the same way: its
// name, its embedded extension files, its document for the server's brand
// and, with Register, its type and registration.
func Plugin(opts PluginOptions) ([]byte, error) {
	f := jen.NewFile(opts.Package)
	f.HeaderComment(Header)
	f.ImportName(pkgPlugin, "plugin")
	f.Comment("PluginName is the plugin name this package was generated for (svcgen")
	f.Comment("-plugin): the name of its Plugin object and the prefix of its role")
	f.Comment("templates and UI permissions.")
	f.Const().Id("PluginName").Op("=").Lit(opts.Name)
	f.Line()
	if opts.Extensions != "" {
		f.Anon("embed")
		f.Comment("extensionFiles are the plugin's extension files (its role templates).")
		f.Comment("")
		f.Comment("//go:embed " + opts.Extensions)
		f.Var().Id("extensionFiles").Qual("embed", "FS")
		f.Line()
	}
	f.Comment("Base is the generated part of a plugin type: its name, extension files")
	f.Comment("and OpenAPI document. A plugin type embeds it and adds Start.")
	f.Type().Id("Base").Struct()
	f.Line()
	f.Comment("Name implements plugin.Plugin.")
	f.Func().Params(jen.Id("Base")).Id("Name").Params().String().Block(jen.Return(jen.Id("PluginName")))
	f.Line()
	f.Comment("GeneratedFor implements plugin.Generated: a plugin type whose Name")
	f.Comment("differs from it is refused at start, since its templates carry this name.")
	f.Func().Params(jen.Id("Base")).Id("GeneratedFor").Params().String().Block(jen.Return(jen.Id("PluginName")))
	f.Line()
	if opts.Extensions != "" {
		f.Comment("Extensions implements plugin.Extender: the files of " + opts.Extensions + "/.")
		f.Func().Params(jen.Id("Base")).Id("Extensions").Params().Qual("io/fs", "FS").Block(
			jen.List(jen.Id("sub"), jen.Err()).Op(":=").Qual("io/fs", "Sub").Call(jen.Id("extensionFiles"), jen.Lit(opts.Extensions)),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Panic(jen.Err()).Comment("the embed pattern guarantees the folder"),
			),
			jen.Return(jen.Id("sub")),
		)
		f.Line()
	}
	body := []jen.Code{jen.Id("doc").Op(":=").Id("OpenAPI").Call()}
	if len(opts.Rebrand) == 0 {
		body = nil
	}
	for _, g := range opts.Rebrand {
		prefix, ok := strings.CutSuffix(g, opts.Brand)
		if !ok {
			return nil, fmt.Errorf("plugin file: group %q is not under brand %s", g, opts.Brand)
		}
		body = append(body, jen.Id("doc").Op("=").Qual("bytes", "ReplaceAll").Call(
			jen.Id("doc"),
			jen.Index().Byte().Call(jen.Lit("/apis/"+g+"/")),
			jen.Index().Byte().Call(jen.Lit("/apis/"+prefix).Op("+").Id("brand").Op("+").Lit("/")),
		))
	}
	if body == nil {
		body = append(body, jen.Return(jen.Id("OpenAPI").Call()))
	} else {
		body = append(body, jen.Return(jen.Id("doc")))
	}
	f.Comment("OpenAPI implements plugin.Documented: the generated document, whose")
	f.Comment("version-only routes' group follows the server's brand.")
	f.Func().Params(jen.Id("Base")).Id("OpenAPI").Params(jen.Id("brand").String()).Index().Byte().Block(body...)
	if opts.Register {
		f.Line()
		f.Func().Id("init").Params().Block(jen.Qual(pkgPlugin, "Register").Call(jen.Id("Plugin").Values()))
		f.Line()
		f.Commentf("Plugin is the %s plugin. Its Start method, written by hand beside this", opts.Name)
		f.Comment("file, declares its models, routes and controllers.")
		f.Type().Id("Plugin").Struct(jen.Id("Base"))
		f.Line()
		guards := []jen.Code{
			jen.Id("_").Qual(pkgPlugin, "Plugin").Op("=").Id("Plugin").Values(),
			jen.Id("_").Qual(pkgPlugin, "Documented").Op("=").Id("Plugin").Values(),
			jen.Id("_").Qual(pkgPlugin, "Generated").Op("=").Id("Plugin").Values(),
		}
		if opts.Extensions != "" {
			guards = append(guards, jen.Id("_").Qual(pkgPlugin, "Extender").Op("=").Id("Plugin").Values())
		}
		f.Var().Defs(guards...)
	}
	var b strings.Builder
	if err := f.Render(&b); err != nil {
		return nil, fmt.Errorf("render plugin file: %w", err)
	}
	return []byte(b.String()), nil
}
