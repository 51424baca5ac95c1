package ui

import "testing"

func TestTestOutcomesUnittestAndPytest(t *testing.T) {
	unittest := `test_a (tests.test_x.T.test_a) ... ok
test_b (tests.test_x.T.test_b) ... FAIL
test_c (tests.test_x.T.test_c) ... skipped 'no network'
test_d (tests.test_y.U.test_d) ... ERROR
`
	got := TestOutcomes(unittest)
	want := map[string]bool{"tests.test_x.T.test_a": true, "tests.test_x.T.test_b": false, "tests.test_y.U.test_d": false}
	if len(got) != len(want) {
		t.Fatalf("unittest outcomes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	pytest := `tests/test_pricing.py::BulkDiscountTest::test_one PASSED                 [ 50%]
tests/test_pricing.py::test_two[3-4] FAILED                                [100%]
`
	got = TestOutcomes(pytest)
	if v, ok := got["tests.test_pricing.BulkDiscountTest.test_one"]; !ok || !v {
		t.Errorf("pytest pass missing: %v", got)
	}
	if v, ok := got["tests.test_pricing.test_two"]; !ok || v {
		t.Errorf("pytest parametrised failure missing: %v", got)
	}
	if len(TestOutcomes("random output\nno tests here")) != 0 {
		t.Error("outcomes from unrelated output")
	}
}
