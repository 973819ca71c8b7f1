# Two commands for a newcomer: `make demo` (build coal, build the social16 graph, query it)
# and `make test`. One build profile (dev, with optimized dependencies) everywhere.

SHARED  ?= ../shared
CORPUS  ?= $(SHARED)/corpus/lawrefbook
PROFILE ?= $(SHARED)/corpus/profiles/social16.txt
STORE   ?= store
COAL    := target/debug/coal

.PHONY: coal demo test bench-build fmt clippy

coal:
	cargo build -p coal

demo: coal
	$(COAL) build --corpus $(CORPUS) --profile $(PROFILE) --store $(STORE)
	@echo
	@echo "Chapters of 劳动合同法 and their article counts:"
	$(COAL) sparql --store $(STORE) --file examples/labor-contract-chapters.rq

test:
	cargo test --workspace --all-targets

# Structure-only build of the whole LawRefBook folder; prints the summary and peak memory.
bench-build: coal
	rm -rf /tmp/coal-bench-store
	/usr/bin/time -v $(COAL) build --corpus $(CORPUS) --store /tmp/coal-bench-store 2>&1 | \
		grep -E "build |files read|graph:|time:|Maximum resident|Elapsed"

fmt:
	cargo fmt --all

clippy:
	cargo clippy --workspace --all-targets -- -D warnings
