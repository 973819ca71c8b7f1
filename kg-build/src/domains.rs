//! Domains (METHOD.md §2 step 3): article embeddings → UMAP (5 dimensions, fed by HNSW
//! neighbours) → Gaussian mixtures with the component count chosen by BIC: articles into
//! topic clusters, topic clusters into domains. Fixed seeds, so a build is repeatable.
//! Each cluster is labelled by its most distinctive words.

use std::collections::HashMap;

use hnsw_rs::prelude::*;
use linfa::prelude::*;
use linfa_clustering::GaussianMixtureModel;
use rand::{Rng, SeedableRng};
use serde::Serialize;

const SEED: u64 = 42;
const UMAP_DIMS: usize = 5;

/// Topic counts tried for the article layer, and domain counts for the topic layer.
const TOPIC_KS: &[usize] = &[8, 16, 32, 64, 128];
const DOMAIN_KS: &[usize] = &[2, 3, 4, 6, 8, 12, 16];
/// Topics a domain has at least, on average: a domain groups topics.
const TOPICS_PER_DOMAIN: usize = 4;

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct DomainReport {
    /// Whether the previous build's clusters were kept (few articles changed) instead of
    /// clustering again, and the share of articles that were new or changed.
    #[serde(default)]
    pub reused: bool,
    #[serde(default)]
    pub changed_share: f64,
    pub articles: usize,
    /// Articles UMAP and the mixtures were fitted on when the clustering took a sample
    /// (the rest joined their nearest topic); 0 when it fitted all of them.
    #[serde(default)]
    pub sampled: usize,
    pub topics: usize,
    pub domains: usize,
    /// (components, BIC) of every topic-layer fit.
    pub topic_bic: Vec<(usize, f64)>,
    pub domain_bic: Vec<(usize, f64)>,
    /// Agreement of the topic clusters with the corpus folders (across laws) and with the
    /// chapters (within each law of 30+ articles, weighted by size), next to the same
    /// cluster sizes assigned at random.
    pub nmi_folders: f64,
    pub ari_folders: f64,
    pub nmi_folders_random: f64,
    pub ari_folders_random: f64,
    pub nmi_chapters: f64,
    pub nmi_chapters_random: f64,
    /// ARI within laws (NMI favours many small clusters, which random labels have).
    pub ari_chapters: f64,
    pub ari_chapters_random: f64,
    /// Agreement of the domains (each article's topic's) with the corpus folders, next to
    /// the same domain sizes at random.
    #[serde(default)]
    pub nmi_domains_folders: f64,
    #[serde(default)]
    pub nmi_domains_folders_random: f64,
    /// Topics and domains given an LLM summary, and the ones whose request failed.
    #[serde(default)]
    pub summaries: usize,
    #[serde(default)]
    pub summary_failures: usize,
}

/// Past this share of new or changed articles the clusters are computed again; below it
/// the previous build's clusters are kept and new articles join their nearest topic
/// (the default of `coal build --recluster-share`).
pub const RECLUSTER_SHARE: f64 = 0.10;

/// What a build keeps of its clusters for the next one (`domains.json` in its folder).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Stored {
    /// (article IRI, text hash, topic) of every clustered article.
    pub articles: Vec<(String, String, usize)>,
    /// Unit mean embedding of each topic.
    pub centroids: Vec<Vec<f32>>,
    pub domain_of_topic: Vec<usize>,
    pub topic_labels: Vec<String>,
    pub domain_labels: Vec<String>,
    pub report: DomainReport,
}

pub const STORED_FILE: &str = "domains.json";

impl Stored {
    pub fn read(dir: &std::path::Path) -> Option<Stored> {
        serde_json::from_slice(&std::fs::read(dir.join(STORED_FILE)).ok()?).ok()
    }

    pub fn write(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(
            dir.join(STORED_FILE),
            serde_json::to_vec(self).expect("serializes"),
        )
    }

    /// Topics for `articles` ((IRI, text hash, vector)) from these clusters: kept for
    /// unchanged articles, the nearest centroid for the others. `None` when more than
    /// `max_share` of them are new or changed, when `max_share` is 0 (clustering again is
    /// asked for: an earlier build's clusters are kept otherwise, even those of an older
    /// clustering) or when nothing was stored.
    pub fn reuse(
        &self,
        articles: &[(String, String, &[f32])],
        max_share: f64,
    ) -> Option<(Vec<usize>, f64)> {
        let known: HashMap<(&str, &str), usize> = self
            .articles
            .iter()
            .map(|(i, h, t)| ((i.as_str(), h.as_str()), *t))
            .collect();
        let changed = articles
            .iter()
            .filter(|(i, h, _)| !known.contains_key(&(i.as_str(), h.as_str())))
            .count();
        let share = changed as f64 / articles.len().max(1) as f64;
        if share > max_share || max_share <= 0.0 || self.centroids.is_empty() {
            return None;
        }
        let topics = articles
            .iter()
            .map(|(i, h, v)| match known.get(&(i.as_str(), h.as_str())) {
                Some(&t) => t,
                None => nearest(&self.centroids, v),
            })
            .collect();
        Some((topics, share))
    }
}

fn nearest(centroids: &[Vec<f32>], v: &[f32]) -> usize {
    let dot = |c: &Vec<f32>| c.iter().zip(v).map(|(a, b)| a * b).sum::<f32>();
    (0..centroids.len())
        .max_by(|&a, &b| dot(&centroids[a]).total_cmp(&dot(&centroids[b])))
        .unwrap_or(0)
}

/// Unit mean vector of each topic.
pub fn centroids(vectors: &[Vec<f32>], topic: &[usize], topics: usize) -> Vec<Vec<f32>> {
    let dim = vectors.first().map_or(0, Vec::len);
    let mut c = vec![vec![0f32; dim]; topics];
    for (v, &t) in vectors.iter().zip(topic) {
        c[t].iter_mut().zip(v).for_each(|(a, b)| *a += b);
    }
    for x in &mut c {
        let n = x.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
        x.iter_mut().for_each(|a| *a /= n);
    }
    c
}

/// Cluster assignments: `topic[i]` for article `i`, `domain[t]` for topic `t`.
#[derive(Debug, Clone)]
pub struct Clustering {
    pub topic: Vec<usize>,
    pub domain: Vec<usize>,
    pub topic_bic: Vec<(usize, f64)>,
    pub domain_bic: Vec<(usize, f64)>,
    /// Articles the mixtures were fitted on when they were a sample (0: all of them).
    pub sampled: usize,
}

/// The `k` nearest others of each unit vector, with their cosine.
pub(crate) fn neighbours(vectors: &[Vec<f32>], k: usize) -> Vec<Vec<(usize, f64)>> {
    let (idx, dist) = knn(vectors, (k + 1).min(vectors.len()));
    (0..vectors.len())
        .map(|i| {
            idx.row(i)
                .iter()
                .zip(dist.row(i))
                .filter(|(j, _)| **j != u32::MAX && **j as usize != i)
                .map(|(j, d)| (*j as usize, (1.0 - *d as f64) / (0.9999f64 * 0.9999)))
                .collect()
        })
        .collect()
}

fn knn(vectors: &[Vec<f32>], k: usize) -> (ndarray17::Array2<u32>, ndarray17::Array2<f32>) {
    // DistDot asserts 1 − a·b ≥ 0, which rounding breaks for near-identical unit vectors.
    let shrunk: Vec<Vec<f32>> = vectors
        .iter()
        .map(|v| v.iter().map(|x| x * 0.9999).collect())
        .collect();
    let vectors = &shrunk;
    let n = vectors.len();
    let hnsw = Hnsw::<f32, DistDot>::new(16, n, 16, 100, DistDot {});
    let data: Vec<(&Vec<f32>, usize)> = vectors.iter().zip(0..).collect();
    hnsw.parallel_insert(&data);
    let mut idx = ndarray17::Array2::<u32>::zeros((n, k));
    let mut dist = ndarray17::Array2::<f32>::zeros((n, k));
    let found: Vec<Vec<Neighbour>> = {
        use rayon::prelude::*;
        vectors.par_iter().map(|v| hnsw.search(v, k, 64)).collect()
    };
    for (i, res) in found.iter().enumerate() {
        for j in 0..k {
            let (id, d) = res
                .get(j)
                .map(|nb| (nb.d_id as u32, nb.distance.max(0.0)))
                .unwrap_or((u32::MAX, f32::INFINITY));
            idx[(i, j)] = id;
            dist[(i, j)] = d;
        }
    }
    (idx, dist)
}

fn umap(vectors: &[Vec<f32>]) -> Vec<Vec<f64>> {
    let n = vectors.len();
    let dim = vectors[0].len();
    let k = (((n - 1) as f64).sqrt() as usize).clamp(5, 30).min(n - 1);
    let (idx, dist) = knn(vectors, k);
    let x = ndarray17::Array2::from_shape_vec((n, dim), vectors.concat()).expect("n × dim");
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED);
    let init = ndarray17::Array2::from_shape_fn((n, UMAP_DIMS), |_| rng.random_range(-1.0f32..1.0));
    let cfg = umap_rs::UmapConfig {
        n_components: UMAP_DIMS,
        graph: umap_rs::GraphParams {
            n_neighbors: k,
            ..Default::default()
        },
        manifold: umap_rs::ManifoldParams {
            min_dist: 0.0,
            ..Default::default()
        },
        optimization: umap_rs::OptimizationParams {
            n_epochs: Some(if n > 10_000 { 200 } else { 500 }),
            ..Default::default()
        },
    };
    // umap-rs optimizes in parallel (Hogwild!) and the neighbour graph is approximate, so
    // runs agree in quality, not in every assignment (the seeds fix what they can).
    let emb = umap_rs::Umap::new(cfg)
        .fit(x.view(), idx.view(), dist.view(), init.view())
        .into_embedding();
    emb.outer_iter()
        .map(|r| {
            r.iter()
                .map(|&v| if v.is_finite() { v as f64 } else { 0.0 })
                .collect()
        })
        .collect()
}

/// ln N(x; μ, Σ) through a Cholesky factor; `None` when Σ is not positive definite.
fn log_normal(x: &[f64], mu: &[f64], cov: &[Vec<f64>]) -> Option<f64> {
    let d = x.len();
    let mut l = vec![vec![0.0; d]; d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let v = cov[i][i] - s;
                if v <= 0.0 {
                    return None;
                }
                l[i][j] = v.sqrt();
            } else {
                l[i][j] = (cov[i][j] - s) / l[j][j];
            }
        }
    }
    let mut y = vec![0.0; d];
    for i in 0..d {
        let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
        y[i] = (x[i] - mu[i] - s) / l[i][i];
    }
    let quad: f64 = y.iter().map(|v| v * v).sum();
    let logdet: f64 = (0..d).map(|i| 2.0 * l[i][i].ln()).sum();
    Some(-0.5 * (d as f64 * (2.0 * std::f64::consts::PI).ln() + logdet + quad))
}

/// Fits a full-covariance mixture with `k` components; its labels and BIC
/// (−2 ln L + p ln n, p = k·(d + d(d+1)/2) + k − 1).
fn gmm(points: &[Vec<f64>], k: usize) -> Option<(Vec<usize>, f64)> {
    let (n, d) = (points.len(), points[0].len());
    let arr = ndarray::Array2::from_shape_vec((n, d), points.concat()).ok()?;
    let ds = DatasetBase::from(arr);
    // linfa's default generator is seeded (Xoshiro256Plus, 42): repeatable fits.
    let model = GaussianMixtureModel::params(k)
        .n_runs(1)
        .tolerance(1e-3)
        .reg_covariance(1e-4)
        .max_n_iterations(100)
        .fit(&ds)
        .ok()?;
    let (w, mu, cov) = (model.weights(), model.means(), model.covariances());
    let comps: Vec<(f64, Vec<f64>, Vec<Vec<f64>>)> = (0..k)
        .map(|c| {
            (
                w[c],
                mu.row(c).to_vec(),
                (0..d)
                    .map(|i| (0..d).map(|j| cov[(c, i, j)]).collect())
                    .collect(),
            )
        })
        .collect();
    let mut ll = 0.0;
    for x in points {
        let terms: Vec<f64> = comps
            .iter()
            .filter_map(|(wc, m, s)| log_normal(x, m, s).map(|l| wc.max(1e-300).ln() + l))
            .collect();
        let mx = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if !mx.is_finite() {
            return None;
        }
        ll += mx + terms.iter().map(|t| (t - mx).exp()).sum::<f64>().ln();
    }
    let p = (k * (d + d * (d + 1) / 2) + k - 1) as f64;
    let bic = -2.0 * ll + p * (n as f64).ln();
    let labels = model.predict(ds.records()).to_vec();
    Some((labels, bic))
}

/// The fit with the lowest BIC among `ks` (those the data can support).
fn best_gmm(
    points: &[Vec<f64>],
    ks: &[usize],
    min_per_component: usize,
) -> (Vec<usize>, Vec<(usize, f64)>) {
    use rayon::prelude::*;
    let candidates: Vec<usize> = ks
        .iter()
        .copied()
        .filter(|&k| k * min_per_component <= points.len())
        .collect();
    // Each fit is seeded on its own, so fitting them side by side changes no result.
    let fits: Vec<_> = candidates
        .par_iter()
        .map(|&k| (k, gmm(points, k)))
        .collect();
    let mut tried = Vec::new();
    let mut best: Option<(f64, Vec<usize>)> = None;
    for (k, fit) in fits {
        if let Some((labels, bic)) = fit {
            tried.push((k, bic));
            if best.as_ref().is_none_or(|(b, _)| bic < *b) {
                best = Some((bic, labels));
            }
        }
    }
    let labels = best.map(|b| b.1).unwrap_or_else(|| vec![0; points.len()]);
    (compact(&labels), tried)
}

/// Renumbers labels 0..m in order of first appearance (empty components vanish).
fn compact(labels: &[usize]) -> Vec<usize> {
    let mut map = HashMap::new();
    labels
        .iter()
        .map(|l| {
            let n = map.len();
            *map.entry(*l).or_insert(n)
        })
        .collect()
}

/// Past this many articles the mixtures are fitted on a seeded sample of this size and
/// every other article joins the topic whose centroid (the unit mean embedding of its
/// sampled articles) is nearest: UMAP and the GMM fits grow with the points, and a sample
/// this large already gives each of the at most 128 topics hundreds of articles.
pub const CLUSTER_SAMPLE: usize = 40_000;

/// Articles → topics → domains. Needs at least 40 articles; fewer give one topic. Past
/// [`CLUSTER_SAMPLE`] articles, fitted on a sample and the rest assigned (two levels).
/// Not bit-for-bit repeatable (parallel HNSW and UMAP), but each run is seeded.
pub fn cluster(vectors: &[Vec<f32>]) -> Clustering {
    cluster_sampled(vectors, CLUSTER_SAMPLE)
}

/// [`cluster`] with the sample size as a parameter.
fn cluster_sampled(vectors: &[Vec<f32>], sample_size: usize) -> Clustering {
    if vectors.len() <= sample_size {
        return cluster_all(vectors);
    }
    let sample = sample_indices(vectors.len(), sample_size);
    let sampled: Vec<Vec<f32>> = sample.iter().map(|&i| vectors[i].clone()).collect();
    let fitted = cluster_all(&sampled);
    let topics = fitted.topic.iter().max().map_or(0, |m| m + 1);
    let centres = centroids(&sampled, &fitted.topic, topics);
    let mut topic: Vec<usize> = {
        use rayon::prelude::*;
        vectors.par_iter().map(|v| nearest(&centres, v)).collect()
    };
    for (&i, &t) in sample.iter().zip(&fitted.topic) {
        topic[i] = t;
    }
    // Every fitted topic has its sampled articles, so the numbering (which `domain`
    // is indexed by) stays dense.
    Clustering {
        topic,
        sampled: sample_size,
        ..fitted
    }
}

/// The articles the sampled fit sees: a seeded shuffle's first `size`, in index order, so
/// the same corpus always fits the same sample.
fn sample_indices(n: usize, size: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED + 2);
    for i in (1..order.len()).rev() {
        let j = rng.random_range(0..=i);
        order.swap(i, j);
    }
    let mut sample = order[..size.min(n)].to_vec();
    sample.sort_unstable();
    sample
}

fn cluster_all(vectors: &[Vec<f32>]) -> Clustering {
    if vectors.len() < 40 {
        return Clustering {
            topic: vec![0; vectors.len()],
            domain: vec![0],
            topic_bic: Vec::new(),
            domain_bic: Vec::new(),
            sampled: 0,
        };
    }
    let points = umap(vectors);
    let (topic, topic_bic) = best_gmm(&points, TOPIC_KS, 10);
    let topics = topic.iter().max().map_or(0, |m| m + 1);
    let (domain, domain_bic) = if topics >= 8 {
        domains_of_topics(&points, &topic, topics)
    } else {
        (vec![0; topics], Vec::new())
    };
    Clustering {
        topic,
        domain,
        topic_bic,
        domain_bic,
        sampled: 0,
    }
}

/// Topics into domains: a mixture over the articles' points, its component count chosen
/// by BIC among the [`DOMAIN_KS`] that leave [`TOPICS_PER_DOMAIN`] topics a domain, and
/// each topic in the domain most of its articles fall in (ties to the lower number).
/// The mixture is fitted on the articles, not on the topics' centroids: on the eval
/// profile's 64 centroids BIC rose with every component past two (1,344 at 2, 1,597 at
/// 8), so its 214 laws fell into 2 domains and a labour question's 公司 and 工资 into
/// different ones; on the 15,303 articles it falls up to the largest count tried.
fn domains_of_topics(
    points: &[Vec<f64>],
    topic: &[usize],
    topics: usize,
) -> (Vec<usize>, Vec<(usize, f64)>) {
    let ks: Vec<usize> = DOMAIN_KS
        .iter()
        .copied()
        .filter(|&k| k * TOPICS_PER_DOMAIN <= topics)
        .collect();
    let (article_domain, bic) = best_gmm(points, &ks, 10);
    let domains = article_domain.iter().max().map_or(0, |m| m + 1);
    let mut votes = vec![vec![0usize; domains]; topics];
    for (&t, &d) in topic.iter().zip(&article_domain) {
        votes[t][d] += 1;
    }
    let majority = votes
        .iter()
        .map(|v| (0..domains).rev().max_by_key(|&d| v[d]).unwrap_or(0))
        .collect::<Vec<_>>();
    (compact(&majority), bic)
}

/// Normalized mutual information (arithmetic mean normalization) of two labelings.
pub fn nmi(a: &[usize], b: &[usize]) -> f64 {
    let n = a.len() as f64;
    if a.is_empty() {
        return 0.0;
    }
    let mut joint: HashMap<(usize, usize), f64> = HashMap::new();
    let mut pa: HashMap<usize, f64> = HashMap::new();
    let mut pb: HashMap<usize, f64> = HashMap::new();
    for (&x, &y) in a.iter().zip(b) {
        *joint.entry((x, y)).or_default() += 1.0;
        *pa.entry(x).or_default() += 1.0;
        *pb.entry(y).or_default() += 1.0;
    }
    let h = |m: &HashMap<usize, f64>| -m.values().map(|c| (c / n) * (c / n).ln()).sum::<f64>();
    let mi: f64 = joint
        .iter()
        .map(|(&(x, y), &c)| (c / n) * ((c * n) / (pa[&x] * pb[&y])).ln())
        .sum();
    let (ha, hb) = (h(&pa), h(&pb));
    if ha + hb == 0.0 {
        1.0
    } else {
        2.0 * mi / (ha + hb)
    }
}

/// Adjusted Rand index of two labelings.
pub fn ari(a: &[usize], b: &[usize]) -> f64 {
    let c2 = |x: f64| x * (x - 1.0) / 2.0;
    let mut joint: HashMap<(usize, usize), f64> = HashMap::new();
    let mut pa: HashMap<usize, f64> = HashMap::new();
    let mut pb: HashMap<usize, f64> = HashMap::new();
    for (&x, &y) in a.iter().zip(b) {
        *joint.entry((x, y)).or_default() += 1.0;
        *pa.entry(x).or_default() += 1.0;
        *pb.entry(y).or_default() += 1.0;
    }
    let index: f64 = joint.values().map(|&c| c2(c)).sum();
    let sa: f64 = pa.values().map(|&c| c2(c)).sum();
    let sb: f64 = pb.values().map(|&c| c2(c)).sum();
    let expected = sa * sb / c2(a.len() as f64).max(1.0);
    let max = (sa + sb) / 2.0;
    if (max - expected).abs() < 1e-12 {
        0.0
    } else {
        (index - expected) / (max - expected)
    }
}

/// The same label sizes, shuffled with a fixed seed: the random baseline.
pub fn shuffled(labels: &[usize]) -> Vec<usize> {
    let mut v = labels.to_vec();
    let mut rng = rand::rngs::StdRng::seed_from_u64(SEED + 1);
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
    v
}

/// Word counts per cluster: a cluster's texts cut by jieba (in parallel), words of two or
/// more letters or digits. Counts are whole numbers, so their sums do not depend on the
/// order the parallel pieces are merged in.
pub fn word_counts(
    texts: &[String],
    cluster_of: &[usize],
    clusters: usize,
) -> Vec<HashMap<String, f64>> {
    use rayon::prelude::*;
    let jieba = jieba_rs::Jieba::new();
    let empty = || vec![HashMap::<String, f64>::new(); clusters];
    texts
        .par_iter()
        .zip(cluster_of.par_iter())
        .fold(empty, |mut tf, (t, &c)| {
            for w in jieba.cut(t, false) {
                let w = w.word.trim();
                if w.chars().count() >= 2 && w.chars().all(|c| c.is_alphanumeric()) {
                    *tf[c].entry(w.to_owned()).or_default() += 1.0;
                }
            }
            tf
        })
        .reduce(empty, |mut a, b| {
            for (into, from) in a.iter_mut().zip(b) {
                merge_into(into, from);
            }
            a
        })
}

fn merge_into(into: &mut HashMap<String, f64>, from: HashMap<String, f64>) {
    for (w, n) in from {
        *into.entry(w).or_default() += n;
    }
}

/// The word counts of clusters summed into their groups (topics into domains):
/// `group_of[c]` is cluster `c`'s group.
pub fn group_counts(
    counts: Vec<HashMap<String, f64>>,
    group_of: &[usize],
    groups: usize,
) -> Vec<HashMap<String, f64>> {
    let mut out = vec![HashMap::new(); groups];
    for (c, m) in counts.into_iter().enumerate() {
        if let Some(&g) = group_of.get(c) {
            merge_into(&mut out[g], m);
        }
    }
    out
}

/// The `n` most distinctive words of each cluster (tf·idf over the clusters, from
/// [`word_counts`]), joined by `·`; ties go to the word that sorts first.
pub fn labels_of_counts(tf: &[HashMap<String, f64>], n: usize) -> Vec<String> {
    let clusters = tf.len();
    let mut df: HashMap<&str, f64> = HashMap::new();
    for m in tf {
        for w in m.keys() {
            *df.entry(w.as_str()).or_default() += 1.0;
        }
    }
    tf.iter()
        .map(|m| {
            let total: f64 = m.values().sum::<f64>().max(1.0);
            let mut scored: Vec<(f64, &String)> = m
                .iter()
                .map(|(w, c)| (c / total * (clusters as f64 / df[w.as_str()]).ln(), w))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            scored
                .iter()
                .take(n)
                .map(|(_, w)| w.as_str())
                .collect::<Vec<_>>()
                .join("·")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels of clusters whose texts are cut anew.
    fn labels(texts: &[String], cluster_of: &[usize], clusters: usize, n: usize) -> Vec<String> {
        labels_of_counts(&word_counts(texts, cluster_of, clusters), n)
    }

    #[test]
    fn nmi_and_ari_by_hand() {
        let a = [0, 0, 1, 1];
        assert!((nmi(&a, &[5, 5, 7, 7]) - 1.0).abs() < 1e-12);
        assert!((ari(&a, &[5, 5, 7, 7]) - 1.0).abs() < 1e-12);
        assert!(nmi(&a, &[0, 1, 0, 1]).abs() < 1e-12);
        // Pairs together: 1 in both, 2 in a, 3 in b; expected 2·3/6 = 1 = the index → 0.
        assert!((ari(&[0, 0, 1, 1], &[0, 0, 0, 1]) - 0.0).abs() < 1e-12);
        // Half agreement by hand: a = [0,0,0,1,1,1], b = [0,0,1,1,2,2]: index 2, sums 6
        // and 3, expected 6·3/15 = 1.2, max 4.5 → (2 − 1.2)/(4.5 − 1.2).
        let want = (2.0 - 1.2) / (4.5 - 1.2);
        assert!((ari(&[0, 0, 0, 1, 1, 1], &[0, 0, 1, 1, 2, 2]) - want).abs() < 1e-12);
    }

    fn groups(per: usize, noise: f32) -> (Vec<Vec<f32>>, Vec<usize>) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let (mut v, mut truth) = (Vec::new(), Vec::new());
        for g in 0..3 {
            for _ in 0..per {
                let mut x: Vec<f32> = (0..16).map(|_| rng.random_range(-noise..noise)).collect();
                x[g * 5] += 1.0;
                let norm = x.iter().map(|a| a * a).sum::<f32>().sqrt();
                v.push(x.iter().map(|a| a / norm).collect());
                truth.push(g);
            }
        }
        (v, truth)
    }

    #[test]
    fn clusters_are_kept_below_the_share_of_change_and_new_articles_join_the_nearest() {
        let (v, _) = groups(20, 0.05);
        let topic: Vec<usize> = (0..60).map(|i| i / 20).collect();
        let stored = Stored {
            articles: (0..60)
                .map(|i| (format!("a{i}"), "h".into(), topic[i]))
                .collect(),
            centroids: centroids(&v, &topic, 3),
            domain_of_topic: vec![0, 0, 1],
            topic_labels: vec![String::new(); 3],
            domain_labels: vec![String::new(); 2],
            report: DomainReport::default(),
        };
        // Two articles changed (3.3%): kept; a changed article of group 2 joins topic 2.
        let mut now: Vec<(String, String, &[f32])> = (0..60)
            .map(|i| (format!("a{i}"), "h".to_owned(), v[i].as_slice()))
            .collect();
        now[45].1 = "changed".into();
        now[3].1 = "changed".into();
        let (t, share) = stored.reuse(&now, RECLUSTER_SHARE).unwrap();
        assert_eq!(t, topic);
        assert!((share - 2.0 / 60.0).abs() < 1e-12);
        // Seven changed (11.7%): cluster again.
        for n in now.iter_mut().take(7) {
            n.1 = "changed".into();
        }
        assert!(stored.reuse(&now, RECLUSTER_SHARE).is_none());
        // A larger share allowed: still kept.
        assert!(stored.reuse(&now, 0.2).is_some());
        // A share of 0 asks for a new clustering, even with nothing changed.
        let unchanged: Vec<(String, String, &[f32])> = (0..60)
            .map(|i| (format!("a{i}"), "h".to_owned(), v[i].as_slice()))
            .collect();
        assert!(stored.reuse(&unchanged, 1e-9).is_some());
        assert!(stored.reuse(&unchanged, 0.0).is_none());
    }

    #[test]
    fn labels_name_each_cluster_by_its_own_words_and_domains_by_their_topics() {
        let texts: Vec<String> = [
            "用人单位应当与劳动者订立劳动合同",
            "劳动者的工资按月支付",
            "机动车驾驶人应当遵守道路交通安全法律",
            "机动车发生交通事故造成人身伤亡",
            "税务机关依法征收税款",
            "纳税人应当按期申报缴纳税款",
        ]
        .map(String::from)
        .to_vec();
        let topic = [0, 0, 1, 1, 2, 2];
        let topic_labels = labels(&texts, &topic, 3, 1);
        assert_eq!(topic_labels[0], "劳动者", "{topic_labels:?}");
        assert_eq!(topic_labels[1], "机动车", "{topic_labels:?}");
        assert_eq!(topic_labels[2], "税款", "{topic_labels:?}");
        // A domain's labels from its topics' counts are those of its articles cut anew.
        let domain_of_topic = [0, 0, 1];
        let by_article: Vec<usize> = topic.iter().map(|&t| domain_of_topic[t]).collect();
        let grouped = group_counts(word_counts(&texts, &topic, 3), &domain_of_topic, 2);
        assert_eq!(
            labels_of_counts(&grouped, 3),
            labels(&texts, &by_article, 2, 3)
        );
    }

    #[test]
    fn the_bic_picks_the_number_of_separated_groups() {
        // Three compact groups in 5 dimensions: the likelihood code and BIC choose 3.
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (mut points, mut truth) = (Vec::new(), Vec::new());
        for g in 0..3 {
            for _ in 0..50 {
                let p: Vec<f64> = (0..5)
                    .map(|d| if d == g { 10.0 } else { 0.0 } + rng.random_range(-1.0..1.0))
                    .collect();
                points.push(p);
                truth.push(g);
            }
        }
        let (labels, bics) = best_gmm(&points, &[2, 3, 4, 6], 10);
        let best = bics.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
        assert_eq!(best, 3, "{bics:?}");
        assert!(nmi(&labels, &truth) > 0.99);
    }

    #[test]
    fn domains_group_the_topics_of_each_separated_region() {
        // Four regions far apart in 5 dimensions, each of four topics a little apart: the
        // domains are the regions, and every topic joins its own region's.
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let (mut points, mut topic) = (Vec::new(), Vec::new());
        for region in 0..4 {
            for sub in 0..4 {
                for _ in 0..40 {
                    let p: Vec<f64> = (0..5)
                        .map(|d| {
                            let far = if d == region { 20.0 } else { 0.0 };
                            let near = if d == 4 { 3.0 * sub as f64 } else { 0.0 };
                            far + near + rng.random_range(-0.5..0.5)
                        })
                        .collect();
                    points.push(p);
                    topic.push(region * 4 + sub);
                }
            }
        }
        let (domain, bic) = domains_of_topics(&points, &topic, 16);
        assert_eq!(domain.len(), 16, "a domain for every topic");
        assert_eq!(
            bic.iter().map(|b| b.0).collect::<Vec<_>>(),
            vec![2, 3, 4],
            "at least four topics a domain"
        );
        assert_eq!(
            domain.iter().max(),
            Some(&3),
            "four domains: {domain:?} {bic:?}"
        );
        for region in 0..4 {
            let d = domain[region * 4];
            assert!(
                (0..4).all(|sub| domain[region * 4 + sub] == d),
                "region {region}: {domain:?}"
            );
        }
    }

    #[test]
    fn umap_and_mixtures_recover_groups_of_embeddings() {
        let (v, truth) = groups(60, 0.3);
        let c = cluster(&v);
        assert!(c.topic_bic.len() >= 2, "{:?}", c.topic_bic);
        let score = nmi(&c.topic, &truth);
        let random = nmi(&shuffled(&c.topic), &truth);
        assert!(
            score > 0.5 && score > random + 0.3,
            "{score} vs {random} {:?}",
            c.topic_bic
        );
        // The neighbour graph (HNSW) is approximate and built in parallel, so a second run
        // may differ in detail; it must be as good.
        assert!(nmi(&cluster(&v).topic, &truth) > 0.5);
    }

    #[test]
    fn past_the_sample_size_a_sample_is_fitted_and_the_rest_join_the_nearest_topic() {
        // Well-separated groups, so the test is about the sampling, not the fit's quality.
        let (v, truth) = groups(60, 0.1);
        let c = cluster_sampled(&v, 90);
        assert_eq!(c.sampled, 90);
        assert_eq!(c.topic.len(), 180, "every article has a topic");
        let topics = c.topic.iter().max().unwrap() + 1;
        assert_eq!(c.domain.len(), topics, "a domain for every topic");
        // The fit itself runs over an approximate, parallel-built neighbour graph, so how
        // pure its topics are varies from run to run; what the sampling adds must not
        // vary: every article outside the sample joins the topic whose sampled centroid
        // is nearest, and those joined articles sit with their own group.
        let sample = sample_indices(180, 90);
        let sampled: Vec<Vec<f32>> = sample.iter().map(|&i| v[i].clone()).collect();
        let fitted: Vec<usize> = sample.iter().map(|&i| c.topic[i]).collect();
        let centres = centroids(&sampled, &fitted, topics);
        let outside: Vec<usize> = (0..180).filter(|i| !sample.contains(i)).collect();
        assert_eq!(outside.len(), 90);
        for &i in &outside {
            assert_eq!(c.topic[i], nearest(&centres, &v[i]), "article {i}");
        }
        let purity = |members: &[usize]| {
            let pure: usize = (0..topics)
                .map(|t| {
                    (0..3)
                        .map(|g| {
                            members
                                .iter()
                                .filter(|&&i| c.topic[i] == t && truth[i] == g)
                                .count()
                        })
                        .max()
                        .unwrap()
                })
                .sum();
            pure as f64 / members.len() as f64
        };
        let (fit, joined) = (purity(&sample), purity(&outside));
        // The fit's bar is loose (chance is about .5 with this many topics); the joined
        // articles' is tight, because the nearest centroid of a pure group is its own.
        assert!(fit > 0.6, "the sampled fit separates the groups: {fit}");
        assert!(joined >= 0.95, "joined {joined} (fitted {fit})");
        assert!(nmi(&c.topic, &truth) > 0.4);
        assert_eq!(
            cluster_sampled(&v, 180).sampled,
            0,
            "small enough: all fitted"
        );
    }
}
