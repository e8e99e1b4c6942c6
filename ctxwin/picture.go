package ctxwin

import (
	"fmt"
	"strings"
)

// Picture draws a window as a bar of width columns: the fixed prefix, the
// history up to the shed point with the shed target marked, the headroom
// above the shed point, and the reserve. fixed is the fixed prefix in
// tokens. The legend follows the bar.
func Picture(b Budget, fixed, width int) string {
	if width < 20 {
		width = 20
	}
	col := func(tokens int) int {
		c := (tokens*width + b.Window/2) / b.Window
		return min(max(c, 0), width)
	}
	fixedEnd := col(min(fixed, b.ShedTarget))
	target, shed, usable := col(b.ShedTarget), col(b.ShedPoint), col(b.Usable)
	bar := make([]rune, width)
	for i := range bar {
		switch {
		case i < fixedEnd:
			bar[i] = '▓'
		case i < shed:
			bar[i] = '▒'
		case i < usable:
			bar[i] = '░'
		default:
			bar[i] = '█'
		}
	}
	marks := []rune(strings.Repeat(" ", width+1))
	if target < width {
		bar[target] = '│'
		marks[target] = '^'
	}
	if shed < width {
		bar[shed] = '│'
		marks[shed] = '^'
	}
	var s strings.Builder
	end := FormatTokens(b.Window)
	fmt.Fprintf(&s, "0%s%s\n", strings.Repeat(" ", max(width-1-len(end), 1)), end)
	fmt.Fprintf(&s, "%s\n", string(bar))
	fmt.Fprintf(&s, "%s\n", strings.TrimRight(string(marks), " "))
	fmt.Fprintf(&s, "▓ fixed prefix ~%d   ▒ history   │ shed target %d, shed point %d   ░ headroom   █ reserve %d\n",
		fixed, b.ShedTarget, b.ShedPoint, b.Reserve)
	return s.String()
}
