package ctxwin

import (
	"fmt"
	"math"
)

// WarningPercent is where the chip turns to the warning level: this far
// along to the shed point.
const WarningPercent = 80

// Chip is the status line's ctx chip: `ctx 16k/24k (81% of 20k)`, the
// request size, the window, and how far along it is to the shed point.
type Chip struct {
	Text string
	// Warning is set at WarningPercent or more of the shed point.
	Warning bool
	Size    int
	// Window, ShedPoint and Percent are 0 with no known window.
	Window    int
	ShedPoint int
	Percent   int
}

// NewChip formats the chip for a request of size tokens; b is nil when no
// window is known, and the chip then shows the size alone.
func NewChip(size int, b *Budget) Chip {
	c := Chip{Size: size}
	if b == nil {
		c.Text = "ctx " + FormatTokens(size)
		return c
	}
	c.Window, c.ShedPoint = b.Window, b.ShedPoint
	if b.ShedPoint > 0 {
		c.Percent = int(math.Round(float64(size) * 100 / float64(b.ShedPoint)))
	}
	c.Warning = c.Percent >= WarningPercent
	c.Text = fmt.Sprintf("ctx %s/%s (%d%% of %s)", FormatTokens(size), FormatTokens(b.Window), c.Percent, FormatTokens(b.ShedPoint))
	return c
}

// FormatTokens prints a token count: whole k from 10000 up, one decimal
// from 1000 (8.8k), the number below. Halves round up, and a count that
// rounds to 10.0k prints as 10k, as the VS Code extension's formatter does.
func FormatTokens(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	if tenths := int(math.Floor(float64(n)/100 + 0.5)); n < 10000 && tenths < 100 {
		return fmt.Sprintf("%d.%dk", tenths/10, tenths%10)
	}
	return fmt.Sprintf("%dk", int(math.Floor(float64(n)/1000+0.5)))
}
