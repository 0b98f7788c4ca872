package lessons

import (
	"bytes"
	"fmt"
	"html"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"idemlab/lab/scenario"
)

// ScenarioLang is the info string of a fenced block that holds a scenario.
const ScenarioLang = "scenario"

// render turns a lesson's markdown into HTML and its scenario blocks into
// specs. goldmark is used without its unsafe option, so raw HTML in the
// markdown and javascript: links never reach the page. firstLine is the
// file's line number of the body's first line, for error messages.
func render(src []byte, firstLine int) (string, []scenario.Spec, error) {
	blocks := &scenarioBlocks{ids: map[ast.Node]string{}}
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(blocks, 100))),
	)
	doc := md.Parser().Parse(text.NewReader(src))
	var specs []scenario.Spec
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok || string(fb.Language(src)) != ScenarioLang {
			return ast.WalkContinue, nil
		}
		var body bytes.Buffer
		lines := fb.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			body.Write(seg.Value(src))
		}
		line := firstLine
		if lines.Len() > 0 {
			line += bytes.Count(src[:lines.At(0).Start], []byte("\n"))
		}
		spec, err := scenario.Parse(body.Bytes())
		if err != nil {
			return ast.WalkStop, fmt.Errorf("scenario block starting at line %d: %w", line, err)
		}
		blocks.ids[n] = spec.ID
		specs = append(specs, spec)
		return ast.WalkSkipChildren, nil
	})
	if err != nil {
		return "", nil, err
	}
	var out bytes.Buffer
	if err := md.Renderer().Render(&out, src, doc); err != nil {
		return "", nil, fmt.Errorf("render: %w", err)
	}
	return out.String(), specs, nil
}

// scenarioBlocks renders fenced code blocks: a scenario block becomes the
// element the page mounts a bench on; any other block is code, escaped.
type scenarioBlocks struct {
	ids map[ast.Node]string
}

func (r *scenarioBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.render)
}

func (r *scenarioBlocks) render(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if id, ok := r.ids[n]; ok {
		fmt.Fprintf(w, "<div class=\"scenario\" data-scenario=\"%s\"></div>\n", html.EscapeString(id))
		return ast.WalkSkipChildren, nil
	}
	fb := n.(*ast.FencedCodeBlock)
	w.WriteString("<pre><code")
	if lang := fb.Language(src); len(lang) > 0 {
		fmt.Fprintf(w, " class=\"language-%s\"", html.EscapeString(string(lang)))
	}
	w.WriteString(">")
	lines := fb.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		w.WriteString(html.EscapeString(string(seg.Value(src))))
	}
	w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}
