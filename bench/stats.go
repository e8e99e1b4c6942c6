package main

import "math"

// Intervals: a row's cost and verbatim retention are means over its
// sessions of each session's figure, and their 95% intervals are
// Student's t-intervals over the sessions, mean ± t(0.975, n−1)·s/√n:
// the sessions are independent draws of the generator, while the tasks
// and rounds within a session are not. With one session there is no
// interval (both ends are the mean). A difference between two rows is
// called a win only where their intervals do not overlap.

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom, df ≥ 1 (tabulated to 30, then the normal's 1.96 with
// Cornish–Fisher's first correction).
func tQuantile975(df int) float64 {
	table := []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df <= len(table) {
		return table[max(df, 1)-1]
	}
	z := 1.959964
	return z + (z*z*z+z)/(4*float64(df))
}

// meanCI is the mean of xs and its 95% t-interval.
func meanCI(xs []float64) (mean float64, ci [2]float64) {
	n := len(xs)
	if n == 0 {
		return 0, ci
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, [2]float64{mean, mean}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	half := tQuantile975(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return mean, [2]float64{mean - half, mean + half}
}

// mean is the mean of xs, 0 when empty.
func mean(xs []float64) float64 {
	m, _ := meanCI(xs)
	return m
}
