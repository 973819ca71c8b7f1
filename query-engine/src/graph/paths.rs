//! Bounded shortest paths over the statute graph.
//!
//! From each seed (a node the question links to) a Dijkstra search walks containment,
//! document order (an article's neighbours), citation, concept/entity, topic, deferral and
//! triple edges up to a cost bound, so
//! chapter and section nodes are real hops: two articles of one chapter are two steps
//! apart through it, two articles of one law four steps through the law's chapters. Leaving
//! a node over a fan-out of many edges of one kind costs more (a concept mentioned by
//! three hundred articles, a law's fifty chapters), so hubs do not connect everything.
//! A target reached from several seeds has one shortest path from each: the k shortest
//! paths that reach it from the question's seeds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{EdgeKind, NodeId, NodeKind, StatuteGraph};

/// What one step along an edge costs before the fan-out penalty; `None`: not walked.
/// Document order costs what `Bounds::adjacent_cost` says.
pub fn edge_cost(kind: EdgeKind, bounds: &Bounds) -> Option<f64> {
    use EdgeKind::*;
    Some(match kind {
        Precedes | Follows => bounds.adjacent_cost,
        Contains | ContainedIn => 1.0,
        Cites | CitedBy => 1.0,
        Defines | DefinedBy => 1.0,
        Mentions | MentionedBy => 1.5,
        FusedInto | FusedFrom => 0.5,
        InTopic | TopicOf => 2.0,
        Broader | Narrower => return None,
        DefersTo | DeferredBy => 1.0,
        States | StatedIn | Relates | RelatedFrom => 1.0,
    })
}

/// Bounds of one search.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Paths longer than this cost are not followed.
    pub max_cost: f64,
    /// Nodes settled per seed at most (a search stops early past it; the 款 and 项 a
    /// search passes over past its last step are not settled, so they do not count).
    pub max_nodes: usize,
    /// Extra cost per natural log of a node's fan-out along the edge kind taken.
    pub fan_out_penalty: f64,
    /// What a step to the next or previous article of a law costs.
    pub adjacent_cost: f64,
}

impl Bounds {
    /// The bounds `[method]` sets for the graph tiers.
    pub fn of_method(cfg: &crate::method::MethodConfig) -> Bounds {
        Bounds {
            max_cost: cfg.graph_max_cost,
            max_nodes: cfg.graph_max_nodes,
            fan_out_penalty: cfg.graph_fan_out_penalty,
            adjacent_cost: cfg.graph_adjacent_cost,
        }
    }
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_cost: 4.0,
            max_nodes: 20_000,
            fan_out_penalty: 0.25,
            adjacent_cost: 1.0,
        }
    }
}

/// One step of a path: the edge taken and the node reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub edge: EdgeKind,
    pub node: NodeId,
}

/// Reusable per-question buffers of a search, indexed by node.
pub struct Scratch {
    dist: Vec<f64>,
    pred: Vec<(u32, Option<EdgeKind>)>,
    touched: Vec<u32>,
}

impl Scratch {
    pub fn new(g: &StatuteGraph) -> Scratch {
        let n = g.graph.node_count();
        Scratch {
            dist: vec![f64::INFINITY; n],
            pred: vec![(u32::MAX, None); n],
            touched: Vec::new(),
        }
    }

    fn reset(&mut self) {
        for &t in &self.touched {
            self.dist[t as usize] = f64::INFINITY;
            self.pred[t as usize] = (u32::MAX, None);
        }
        self.touched.clear();
    }
}

/// The shortest paths from one seed to every node within the bounds.
pub struct ShortestPaths {
    pub seed: NodeId,
    /// (node, cost, predecessor, edge from it), sorted by node.
    reached: Vec<(NodeId, f64, u32, Option<EdgeKind>)>,
}

/// A node waiting in a search's heap, cheapest first, then the lower index: its cost's
/// bits (a non-negative f64's bits order as the f64 does) and its index, so that the heap
/// compares two integers where it compared floats (the heap was 2/3 of a walk's time).
type Frontier = Reverse<(u64, u32)>;

fn frontier(cost: f64, n: NodeId) -> Frontier {
    debug_assert!(cost >= 0.0, "costs are sums of non-negative steps");
    Reverse((cost.to_bits(), n.index() as u32))
}

impl ShortestPaths {
    /// Dijkstra from `seed` within `bounds`.
    pub fn from(
        g: &StatuteGraph,
        seed: NodeId,
        bounds: Bounds,
        scratch: &mut Scratch,
    ) -> ShortestPaths {
        scratch.reset();
        let mut settled = 0usize;
        let mut heap = BinaryHeap::new();
        // The cheapest step between nodes: a node past max_cost − it takes only free steps
        // (see `last_step` below).
        let min_step = EdgeKind::ALL
            .iter()
            .filter_map(|&k| edge_cost(k, &bounds))
            .fold(f64::INFINITY, f64::min);
        let s = seed.index();
        scratch.dist[s] = 0.0;
        scratch.touched.push(s as u32);
        heap.push(frontier(0.0, seed));
        let mut reached = Vec::new();
        while let Some(Reverse((bits, n))) = heap.pop() {
            let (cost, n) = (f64::from_bits(bits), NodeId::new(n as usize));
            let ni = n.index();
            if cost > scratch.dist[ni] {
                continue;
            }
            let (p, e) = scratch.pred[ni];
            reached.push((n, cost, p, e));
            settled += 1;
            if settled >= bounds.max_nodes {
                break;
            }
            // Past `last_step` only free steps remain, and only those out of a 款 or 项
            // lead anywhere new: up to the article a citation into it reached. The 款 and
            // 项 below a node there lead only to each other and back, so they are not
            // walked: most of what a search from a law settled (~2,950 nodes), and half
            // of tier 3's walks (0.74 → 0.37 ms a question on lecoqa.dev, timed with a
            // timer added for the measurement). They no longer
            // count towards `max_nodes` either: a search that reaches the cap settles more
            // articles before it than it did (none on the dev sets: the largest of 2,014
            // searches over 100 lecoqa.dev questions settled 3,177 nodes of 5,000).
            let last_step = cost + min_step > bounds.max_cost;
            if last_step && !matches!(g.kind(n), NodeKind::Paragraph | NodeKind::Item) {
                continue;
            }
            for step in g.steps_with_fan_out(n) {
                let Some(base) = edge_cost(step.kind, &bounds) else {
                    continue;
                };
                let (base, penalty) = match (step.inside, last_step) {
                    (true, true) if step.kind == EdgeKind::Contains => continue,
                    (true, _) => (0.0, 0.0),
                    (false, true) => continue,
                    (false, false) => (base, bounds.fan_out_penalty * g.ln_fan_out(step)),
                };
                let (m, kind) = (NodeId::new(step.to as usize), step.kind);
                let c = cost + base + penalty;
                let mi = m.index();
                if c > bounds.max_cost || c >= scratch.dist[mi] {
                    continue;
                }
                if scratch.dist[mi].is_infinite() {
                    scratch.touched.push(mi as u32);
                }
                scratch.dist[mi] = c;
                scratch.pred[mi] = (ni as u32, Some(kind));
                heap.push(frontier(c, m));
            }
        }
        reached.sort_by_key(|r| r.0);
        ShortestPaths { seed, reached }
    }

    fn find(&self, n: NodeId) -> Option<&(NodeId, f64, u32, Option<EdgeKind>)> {
        self.reached
            .binary_search_by_key(&n, |r| r.0)
            .ok()
            .map(|i| &self.reached[i])
    }

    pub fn cost(&self, n: NodeId) -> Option<f64> {
        self.find(n).map(|r| r.1)
    }

    /// Nodes reached, with their cost.
    pub fn reached(&self) -> impl Iterator<Item = (NodeId, f64)> + '_ {
        self.reached.iter().map(|r| (r.0, r.1))
    }

    /// The path from the seed to `n`, seed first (without a step for the seed).
    pub fn path(&self, n: NodeId) -> Option<Vec<Step>> {
        let mut steps = Vec::new();
        let mut cur = n;
        while cur != self.seed {
            let &(_, _, prev, edge) = self.find(cur)?;
            steps.push(Step {
                edge: edge?,
                node: cur,
            });
            cur = NodeId::new(prev as usize);
        }
        steps.reverse();
        Some(steps)
    }
}

/// A path as people read it: 《劳动合同法》第四章 → 第四十六条 → cites → 第四十七条.
pub fn describe(g: &StatuteGraph, seed: NodeId, steps: &[Step]) -> String {
    let mut out = g.display(seed);
    if g.kind(seed).is_hierarchy() && g.kind(seed) != NodeKind::Law {
        out = format!("{}{}", law_prefix(g, seed), out);
    }
    let mut law = g.law_name(seed).map(str::to_owned);
    for s in steps {
        let verb = s.edge.verb();
        out.push_str(" → ");
        if !verb.is_empty() {
            out.push_str(verb);
            out.push_str(" → ");
        }
        // Name the law again when the path crosses into another one (concepts and
        // topics between belong to no hierarchy).
        let here = g.law_name(s.node).map(str::to_owned);
        let hierarchy = g.kind(s.node).is_hierarchy();
        if hierarchy && g.kind(s.node) != NodeKind::Law && here != law {
            out.push_str(&law_prefix(g, s.node));
        }
        if hierarchy && here.is_some() {
            law = here;
        }
        out.push_str(&g.display(s.node));
    }
    out
}

fn law_prefix(g: &StatuteGraph, n: NodeId) -> String {
    g.law_name(n)
        .map(|l| format!("《{l}》"))
        .unwrap_or_default()
}
