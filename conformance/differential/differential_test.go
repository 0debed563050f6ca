package differential

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the recorded Go answers in cases.jsonl")

// One line of cases.jsonl: a hand-picked input of a rule and Go's answer for it.
// The Rust unit tests read the same file and hold the renderer to the same
// answers.
type Case struct {
	Rule  string  `json:"rule"`
	Input string  `json:"input"`
	Want  Verdict `json:"want"`
	Note  string  `json:"note,omitempty"`
}

const casesFile = "cases.jsonl"

func readCases(t *testing.T) []Case {
	t.Helper()
	data, err := os.ReadFile(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	var cases []Case
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s:%d: %v", casesFile, i+1, err)
		}
		if rules[c.Rule] == nil {
			t.Fatalf("%s:%d: unknown rule %q", casesFile, i+1, c.Rule)
		}
		cases = append(cases, c)
	}
	return cases
}

func writeCases(t *testing.T, cases []Case) {
	t.Helper()
	var out bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	if err := os.WriteFile(casesFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The recorded answers are Go's answers (a changed Go or apimachinery shows
// here first).
func TestCasesAreGosAnswers(t *testing.T) {
	cases := readCases(t)
	for i, c := range cases {
		got := rules[c.Rule](c.Input)
		if *update {
			cases[i].Want = got
			continue
		}
		if !equal(c.Rule, got, c.Want) {
			t.Errorf("%s %q: Go says %v, cases.jsonl records %v (go test -update rewrites it)", c.Rule, c.Input, got, c.Want)
		}
	}
	if *update {
		writeCases(t, cases)
	}
}

type query struct {
	Rule  string `json:"rule"`
	Input string `json:"input"`
}

type answer struct {
	Rule    string  `json:"rule"`
	Input   string  `json:"input"`
	Verdict Verdict `json:"verdict"`
}

// verdicts runs the binary's `__verdicts` command: on the given inputs, or on
// the corpus it generates itself.
func verdicts(t *testing.T, args []string, queries []query) []answer {
	t.Helper()
	bin := os.Getenv("RR_BIN")
	if bin == "" {
		t.Fatal("RR_BIN is not set (the rollouts-render binary to judge)")
	}
	cmd := exec.Command(bin, append([]string{"__verdicts"}, args...)...)
	var stdin bytes.Buffer
	for _, q := range queries {
		line, _ := json.Marshal(q)
		stdin.Write(line)
		stdin.WriteByte('\n')
	}
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s __verdicts %v: %v\n%s", bin, args, err, stderr.String())
	}
	var answers []answer
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(make([]byte, 1<<20), 1<<26)
	for scanner.Scan() {
		var a answer
		if err := json.Unmarshal(scanner.Bytes(), &a); err != nil {
			t.Fatalf("__verdicts printed %q: %v", scanner.Text(), err)
		}
		answers = append(answers, a)
	}
	return answers
}

// compare judges every answer of the binary by Go's, and reports counts.
func compare(t *testing.T, what string, answers []answer) {
	t.Helper()
	compared := map[string]int{}
	disagreements := map[string]int{}
	documents := map[string]int{}
	for _, a := range answers {
		judge := rules[a.Rule]
		if judge == nil {
			t.Errorf("the binary answered for an unknown rule %q", a.Rule)
			continue
		}
		compared[a.Rule]++
		want := judge(a.Input)
		if a.Rule == "yaml-document" {
			switch {
			case a.Verdict["accept"] == true && want["accept"] == true:
				documents["accepted by both"]++
			case want["accept"] == false && a.Verdict["accept"] == false:
				documents["refused by both"]++
			case a.Verdict["policy"] != nil:
				documents[fmt.Sprintf("refused here by policy %v", a.Verdict["policy"])]++
			}
		}
		if !equal(a.Rule, a.Verdict, want) {
			disagreements[a.Rule]++
			if disagreements[a.Rule] <= 20 {
				t.Errorf("%s %s %q: rollouts-render says %v, Go says %v", what, a.Rule, a.Input, a.Verdict, want)
			}
		}
	}
	names := make([]string, 0, len(compared))
	for name := range compared {
		names = append(names, name)
	}
	sort.Strings(names)
	var summary []string
	total := 0
	for _, name := range names {
		summary = append(summary, fmt.Sprintf("%s %d", name, compared[name]))
		total += compared[name]
	}
	line := fmt.Sprintf("%s: %d inputs compared with Go (%s), %d disagreements", what, total, strings.Join(summary, ", "), sum(disagreements))
	if len(documents) > 0 {
		kinds := make([]string, 0, len(documents))
		for k, v := range documents {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(kinds)
		line += "; YAML documents: " + strings.Join(kinds, ", ")
	}
	t.Log(line)
	if notes := os.Getenv("RR_NOTES"); notes != "" {
		f, err := os.OpenFile(notes, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestBinaryAgreesOnTheCases(t *testing.T) {
	cases := readCases(t)
	queries := make([]query, len(cases))
	for i, c := range cases {
		queries[i] = query{c.Rule, c.Input}
	}
	answers := verdicts(t, nil, queries)
	if len(answers) != len(queries) {
		t.Fatalf("%d answers for %d cases", len(answers), len(queries))
	}
	compare(t, "hand-picked cases", answers)
}

// The corpus: a fixed seed, thousands of strings per rule, biased to each
// rule's alphabet, generated by the binary and judged here.
func TestBinaryAgreesOnTheGeneratedCorpus(t *testing.T) {
	seed := os.Getenv("RR_SEED")
	if seed == "" {
		seed = "1"
	}
	answers := verdicts(t, []string{"--generate", "--seed", seed, "--per-rule", "3000"}, nil)
	perRule := map[string]int{}
	for _, a := range answers {
		perRule[a.Rule]++
	}
	for name := range rules {
		if perRule[name] < 1000 {
			t.Errorf("the corpus has %d inputs for %s; want thousands", perRule[name], name)
		}
	}
	compare(t, "generated corpus (seed "+seed+")", answers)
}

// equal compares two verdicts as values; numbers of yaml11-plain compare as
// the numbers they denote (both sides print floats their own way).
func equal(rule string, got, want Verdict) bool {
	if rule == "yaml-document" {
		if got["accept"] == true && want["accept"] == true {
			return sameJSON(normalNumbers(got)["json"], normalNumbers(want)["json"])
		}
		// A refusal the renderer makes on purpose (it names the policy) agrees with a
		// Go reading it cannot trust; everything else must match.
		return got["accept"] == want["accept"] || (got["policy"] != nil && got["accept"] == false)
	}
	if rule == "yaml11-plain" && got["type"] == "float" && want["type"] == "float" {
		a, errA := strconv.ParseFloat(fmt.Sprint(got["value"]), 64)
		b, errB := strconv.ParseFloat(fmt.Sprint(want["value"]), 64)
		return errA == nil && errB == nil && (a == b || math.IsNaN(a) && math.IsNaN(b))
	}
	return reflect.DeepEqual(normal(got), normal(want))
}

// normal round-trips a verdict through JSON, so Go values and decoded ones
// compare alike.
func normal(v Verdict) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// normalNumbers round-trips a verdict through JSON keeping numbers as text.
func normalNumbers(v Verdict) map[string]any {
	data, _ := json.Marshal(v)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out map[string]any
	_ = dec.Decode(&out)
	return out
}

// sameJSON compares JSON values, numbers by the amount they denote (Go writes
// 1e+21 where Rust writes 1e21, 1 where Rust writes 1.0).
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okA := new(big.Float).SetString(a.String())
		y, okB := new(big.Float).SetString(b.String())
		return okA && okB && x.Cmp(y) == 0
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a, b)
	}
}
