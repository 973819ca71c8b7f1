# Two commands for a newcomer: `make demo` (build coal, build the social16 graph, query it)
# and `make test`. One build profile (dev, with optimized dependencies) everywhere.

SHARED  ?= ../shared
CORPUS  ?= $(SHARED)/corpus/lawrefbook
PROFILE ?= $(SHARED)/corpus/profiles/social16.txt
STORE   ?= store
COAL    := target/debug/coal

.PHONY: coal demo test bench-build eval-retrieval fmt clippy

coal:
	cargo build -p coal

demo: coal
	$(COAL) build --corpus $(CORPUS) --profile $(PROFILE) --store $(STORE)
	@echo
	@echo "Chapters of 劳动合同法 and their article counts:"
	$(COAL) sparql --store $(STORE) --file examples/labor-contract-chapters.rq
	@echo
	@echo "BM25 search:"
	$(COAL) search --store $(STORE) "用人单位解除劳动合同需要支付经济补偿吗" --k 5

test:
	cargo test --workspace --all-targets

# Structure-only build (graph + metadata, no indexes) of the whole LawRefBook folder;
# prints the summary and peak memory.
bench-build: coal
	rm -rf /tmp/coal-bench-store
	/usr/bin/time -v $(COAL) build --structure-only --corpus $(CORPUS) --store /tmp/coal-bench-store 2>&1 | \
		grep -E "build |files read|graph:|time:|Maximum resident|Elapsed"

# Retrieval evaluation on the eval profile (the four dev sets), as a Markdown table.
EVAL_STORE ?= /tmp/coal-eval-store
EVAL_SETS  ?= lecoqa.dev lawbench-3-8.dev lawbench-1-1.dev sociallawqa.dev
eval-retrieval: coal
	$(COAL) build --corpus $(CORPUS) --profile $(SHARED)/corpus/profiles/eval.txt --store $(EVAL_STORE) >/dev/null
	$(COAL) eval retrieval --store $(EVAL_STORE) $(foreach s,$(EVAL_SETS),--set $(SHARED)/eval/$(s).jsonl)

fmt:
	cargo fmt --all

clippy:
	cargo clippy --workspace --all-targets -- -D warnings
