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
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("%s: %w", path, err)
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
	return report(w, &res, jsonOut, out, specs, engs)
}
