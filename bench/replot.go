package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// report prints res, as JSON or as the table, and writes the results
// files to out unless it is "".
func report(w io.Writer, res *Results, jsonOut bool, out string, specs []PolicySpec, engs []engineSpec) error {
	if jsonOut {
		js, err := marshalResults(res)
		if err != nil {
			return err
		}
		w.Write(js)
	} else {
		writeTable(w, res)
		writeProblems(w, res)
	}
	if out == "" {
		return nil
	}
	return writeResults(out, res, res.Windows, specs, engs)
}

// replot reads the results.json of an earlier run and reports it as that
// run would have, with this code's tables and plots: what it reports,
// not what it measured, changed.
func replot(w io.Writer, path string, jsonOut bool, out string) error {
	res, err := readResults(path)
	if err != nil {
		return err
	}
	var names []string
	for _, r := range res.Rows {
		if !slices.Contains(names, r.Policy) && r.Policy != "reika" {
			names = append(names, r.Policy)
		}
	}
	specs, err := pickPolicies(strings.Join(append(names, "reika"), ","))
	if err != nil {
		return err
	}
	engs, err := pickEngines(strings.Join(res.Engines, ","))
	if err != nil {
		return err
	}
	return report(w, res, jsonOut, out, specs, engs)
}

// readResults reads a results.json; several, comma-separated, are runs of
// the same settings on other seeds, merged into one: their sessions and
// runs together, the rows aggregated again over all of them, the commands
// joined by " && ".
func readResults(paths string) (*Results, error) {
	var all *Results
	for _, path := range strings.Split(paths, ",") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var res Results
		if err := json.Unmarshal(data, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if all == nil {
			all = &res
			continue
		}
		if res.Slots != all.Slots || res.HostMemory != all.HostMemory || res.GenWeight != all.GenWeight ||
			!slices.Equal(res.Windows, all.Windows) || !slices.Equal(res.Engines, all.Engines) {
			return nil, fmt.Errorf("%s: another run's settings (slots, host memory, gen-weight, windows or engines) than the first's", path)
		}
		for _, s := range res.Seeds {
			if slices.Contains(all.Seeds, s) {
				return nil, fmt.Errorf("%s: seed %d is in an earlier file too", path, s)
			}
		}
		all.Command += " && " + res.Command
		all.Seeds = append(all.Seeds, res.Seeds...)
		all.Sessions = append(all.Sessions, res.Sessions...)
		all.Runs = append(all.Runs, res.Runs...)
		all.Rows = nil
	}
	if all.Rows == nil {
		// As one run orders them: runs by window, then seed.
		slices.SortStableFunc(all.Runs, func(a, b *Figures) int {
			if a.Window != b.Window {
				return a.Window - b.Window
			}
			return int(a.Seed - b.Seed)
		})
		var names []string
		for _, f := range all.Runs {
			if !slices.Contains(names, f.Policy) {
				names = append(names, f.Policy)
			}
		}
		engs, err := pickEngines(strings.Join(all.Engines, ","))
		if err != nil {
			return nil, err
		}
		defer func(n int) { slots = n }(slots)
		slots = all.Slots
		all.Rows = aggregate(all.Runs, all.Windows, engs, names)
	}
	return all, nil
}
