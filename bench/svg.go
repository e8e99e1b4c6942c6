package main

import (
	"fmt"
	"io"
	"strings"
)

// policyColor gives each policy its line colour; reika is drawn last and
// thicker.
var policyColor = map[string]string{
	"reika":        "#d62728",
	"none":         "#7f7f7f",
	"mask10":       "#1f77b4",
	"summarize83":  "#2ca02c",
	"drophalf":     "#9467bd",
	"prune40k":     "#ff7f0e",
	"shift60":      "#8c564b",
	"microcompact": "#17becf",
}

// writeSVG plots the context in use over the rounds of one session, one
// panel per window, one line per policy: what each request held. A
// refused request breaks the line and is marked on the window's line.
// turnStarts are the rounds that open a turn.
func writeSVG(w io.Writer, runs []*Figures, seed int64, windows []int, policies []string, turnStarts []int) {
	height := svgTop + len(windows)*(svgPanelH+svgGap)
	var b strings.Builder
	svgHeader(&b, height, seed, policies)
	for wi, win := range windows {
		svgPanel(&b, svgTop+wi*(svgPanelH+svgGap)+16, win, runs, seed, policies, turnStarts)
	}
	b.WriteString("</svg>\n")
	io.WriteString(w, b.String())
}

// The context plot's geometry, in pixels.
const (
	svgWidth  = 960
	svgPanelH = 230
	svgLeft   = 64
	svgRight  = 20
	svgTop    = 56
	svgGap    = 54
	svgPlotW  = svgWidth - svgLeft - svgRight
)

// svgHeader opens the plot: the canvas, the title and the legend.
func svgHeader(b *strings.Builder, height int, seed int64, policies []string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	fmt.Fprintf(b, `<text x="%d" y="20" font-size="15" font-weight="bold">Context in use per round (session seed %d): prompt tokens of each request</text>`+"\n", svgLeft, seed)
	x := svgLeft
	for _, p := range ordered(policies) {
		fmt.Fprintf(b, `<line x1="%d" y1="38" x2="%d" y2="38" stroke="%s" stroke-width="%s"/>`, x, x+22, policyColor[p], strokeWidth(p))
		fmt.Fprintf(b, `<text x="%d" y="42">%s</text>`+"\n", x+27, p)
		x += 40 + 8*len(p)
	}
	fmt.Fprintf(b, `<text x="%d" y="42" fill="#555">× refused (overflow)</text>`+"\n", x+10)
}

// svgPanel draws the panel of one window at y0: its frame, turn starts,
// axes and every policy's line. A window no run has is left out.
func svgPanel(b *strings.Builder, y0, win int, runs []*Figures, seed int64, policies []string, turnStarts []int) {
	rounds := 0
	for _, f := range runs {
		if f.Window == win && f.Seed == seed {
			rounds = max(rounds, len(f.Context))
		}
	}
	if rounds == 0 {
		return
	}
	ymax := float64(win) * 1.05
	px := func(r int) float64 { return svgLeft + float64(r)*float64(svgPlotW)/float64(max(rounds-1, 1)) }
	py := func(t int) float64 { return float64(y0) + float64(svgPanelH) - float64(t)/ymax*float64(svgPanelH) }
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s window</text>`+"\n", svgLeft, y0-6, kTokens(win))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#ccc"/>`+"\n", svgLeft, y0, svgPlotW, svgPanelH)
	for _, r := range turnStarts {
		if r > 0 && r < rounds {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>`+"\n", px(r), y0, px(r), y0+svgPanelH)
		}
	}
	for i := 0; i <= 4; i++ {
		t := win * i / 4
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>`, svgLeft, py(t), svgLeft+svgPlotW, py(t))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", svgLeft-6, py(t)+4, kTokens(t))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#000" stroke-dasharray="5,4"/>`+"\n", svgLeft, py(win), svgLeft+svgPlotW, py(win))
	for r := 0; r < rounds; r += 25 {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%d</text>`, px(r), y0+svgPanelH+15, r+1)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" fill="#555">round</text>`+"\n", svgLeft+svgPlotW, y0+svgPanelH+30)
	for _, p := range ordered(policies) {
		for _, f := range runs {
			if f.Window == win && f.Seed == seed && f.Policy == p {
				svgLine(b, f.Context, p, px, py, py(win))
			}
		}
	}
}

// svgLine draws one policy's context per round as polylines broken at
// refused rounds (0), each marked with a × at yWin, the window's line.
func svgLine(b *strings.Builder, context []int, p string, px func(int) float64, py func(int) float64, yWin float64) {
	var seg []string
	flush := func() {
		if len(seg) > 1 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round" points="%s"/>`+"\n",
				policyColor[p], strokeWidth(p), strings.Join(seg, " "))
		}
		seg = nil
	}
	for r, c := range context {
		if c == 0 {
			flush()
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" font-size="9">×</text>`, px(r), yWin-3, policyColor[p])
			continue
		}
		seg = append(seg, fmt.Sprintf("%.1f,%.1f", px(r), py(c)))
	}
	flush()
}

// ordered puts reika last, so it is drawn on top.
func ordered(policies []string) []string {
	var out []string
	for _, p := range policies {
		if p != "reika" {
			out = append(out, p)
		}
	}
	for _, p := range policies {
		if p == "reika" {
			out = append(out, p)
		}
	}
	return out
}

func strokeWidth(p string) string {
	if p == "reika" {
		return "2.2"
	}
	return "1.3"
}

// writeBars draws a panel per engine and in it, per window, one bar per
// policy: its cost as a multiple of the lower bound (generated tokens
// included), with its verbatim retention under it (the share of the facts
// its answers cite whose lines are in view verbatim), and the share of
// rounds served when it could not serve them all.
func writeBars(w io.Writer, rows []Row, windows []int, policies []string, engines []engineSpec) {
	const (
		width  = 960
		left   = 64
		top    = 60
		panelH = 300
	)
	height := top + len(engines)*panelH + 24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="15" font-weight="bold">Cost (prefill and generated tokens), as a multiple of the append-only lower bound (lower is better); verbatim retention under each bar</text>`+"\n", left)
	x := left
	for _, p := range ordered(policies) {
		fmt.Fprintf(&b, `<rect x="%d" y="31" width="14" height="10" fill="%s"/><text x="%d" y="40">%s</text>`+"\n", x, policyColor[p], x+18, p)
		x += 34 + 8*len(p)
	}
	ymax := 0.0
	for _, r := range rows {
		ymax = max(ymax, r.Cost)
	}
	// The axis is cut at 4× so the others stay readable; taller bars say
	// their value.
	clip := min(float64(int(ymax)+1)*1.05, 4.2)
	for ei, e := range engines {
		var mine []Row
		for _, r := range rows {
			if r.Engine == e.Name {
				mine = append(mine, r)
			}
		}
		barPanel(&b, mine, windows, policies, e.Label, top+ei*panelH, clip)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555" font-size="11">A policy that overflows stops paying for the rounds it cannot serve: its bar is low because the session died (share served below it).</text>`+"\n",
		left, height-6)
	b.WriteString("</svg>\n")
	io.WriteString(w, b.String())
}

// barPanel draws one engine's bars at y0.
func barPanel(b *strings.Builder, rows []Row, windows []int, policies []string, label string, y0 int, clip float64) {
	const (
		width = 960
		left  = 64
		right = 20
		plotH = 190
	)
	top := float64(y0 + 24)
	fmt.Fprintf(b, `<text x="%d" y="%.1f" font-weight="bold">%s</text>`+"\n", left, top-8, label)
	groupW := float64(width-left-right) / float64(len(windows))
	barW := groupW * 0.8 / float64(len(policies))
	py := func(v float64) float64 { return top + plotH - min(v, clip)/clip*plotH }
	for v := 0.0; v <= clip; v += 1 {
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%.0f×</text>`+"\n",
			left, py(v), width-right, py(v), left-6, py(v)+4, v)
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#000" stroke-dasharray="5,4"/>`+"\n", left, py(1), width-right, py(1))
	for wi, win := range windows {
		gx := float64(left) + float64(wi)*groupW + groupW*0.1
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold">%s window</text>`+"\n", gx+groupW*0.4, top+plotH+48, kTokens(win))
		for pi, p := range ordered(policies) {
			for _, r := range rows {
				if r.Window != win || r.Policy != p {
					continue
				}
				bx := gx + float64(pi)*barW
				mid := bx + (barW-3)/2
				fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, bx, py(r.Cost), barW-3, py(0)-py(r.Cost), policyColor[p])
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%.2f</text>`, mid, py(r.Cost)-4, r.Cost)
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9" fill="#333">%.0f%%</text>`, mid, py(0)+12, r.Verbatim*100)
				if r.Served < r.Rounds {
					fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9" fill="#555">served</text><text x="%.1f" y="%.1f" text-anchor="middle" font-size="9" fill="#555">%s</text>`,
						mid, py(0)+23, mid, py(0)+33, pct(r.Served, r.Rounds))
				}
				b.WriteString("\n")
			}
		}
	}
}
