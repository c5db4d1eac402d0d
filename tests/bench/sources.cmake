# Benchmarks (make bench): filled by the benchmark owner.
