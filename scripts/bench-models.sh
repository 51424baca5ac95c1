#!/bin/sh
# Benchmarks of the local model runtime and retrieval (BENCHMARKS.md, "Local model and retrieval").
#   scripts/bench-models.sh            # all: generation, embeddings, vector + lexical search
#   BENCHTIME=5x scripts/bench-models.sh
# The generated benchmark models (~220M parameters, q8_0 and q4_0, ~230 and
# ~125 MB) are written once into $CODELOOM_BENCH_DIR (default /tmp/codeloom-bench).
set -eu
cd "$(dirname "$0")/.."
export CGO_CFLAGS="${CGO_CFLAGS:--O3 -march=native}"
export CGO_CXXFLAGS="${CGO_CXXFLAGS:--O3 -march=native}"
BENCHTIME="${BENCHTIME:-3x}"
echo "# $(date -u +%FT%TZ) $(uname -m), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# CGO_CFLAGS=$CGO_CFLAGS"
go test -run '^$' -bench 'BenchmarkVectorsSearch|BenchmarkLexical' -benchtime 20x ./app/retrieval/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)'
go test -run '^$' -bench 'BenchmarkGenerate|BenchmarkEmbed' -benchtime "$BENCHTIME" -timeout 60m ./models/llamacpp/ 2>&1 | grep -E '^(Benchmark|ok|FAIL|---)|[0-9] (ns/op)'
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
