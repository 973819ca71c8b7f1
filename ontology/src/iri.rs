//! The IRI scheme (ELI-like). See the crate README for the full description.
//!
//! ```text
//! work            https://w3id.org/coal/eli/cn/劳动合同法
//! version         https://w3id.org/coal/eli/cn/劳动合同法/2012-12-28
//! article (work)  https://w3id.org/coal/eli/cn/劳动合同法/art_47
//! article (vers.) https://w3id.org/coal/eli/cn/劳动合同法/2012-12-28/art_47
//! paragraph       …/2012-12-28/art_47/par_2        item …/par_2/pnt_3
//! division        …/2020-05-28/part_1/chp_2/sec_1
//! ```

/// Root of every statute IRI.
pub const ELI_BASE: &str = "https://w3id.org/coal/eli/cn/";
/// Named graph holding build records.
pub const BUILDS_GRAPH: &str = "https://w3id.org/coal/graph/builds";
/// Named graph holding the domain clusters of a build.
pub const DOMAINS_GRAPH: &str = "https://w3id.org/coal/graph/domains";
/// Named graph holding entity fusion (fused entities and every decision).
pub const FUSION_GRAPH: &str = "https://w3id.org/coal/graph/fusion";
/// Prefix of build IRIs.
pub const BUILD_BASE: &str = "https://w3id.org/coal/build/";

/// Percent-encodes what an IRI path segment may not contain (ASCII punctuation, spaces,
/// the ideographic space); Chinese text stays readable.
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let keep = c.is_ascii_alphanumeric()
            || matches!(c, '-' | '_' | '.' | '~')
            || (!c.is_ascii() && !c.is_whitespace() && !c.is_control());
        if keep {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// The law as a work, keyed by its short name (title without 中华人民共和国).
pub fn work(short_name: &str) -> String {
    format!("{ELI_BASE}{}", segment(short_name))
}

/// One version of a law: its version date, or `undated-<hash prefix>`.
pub fn version(work_iri: &str, date: Option<&str>, content_hash: &str) -> String {
    match date {
        Some(d) => format!("{work_iri}/{}", segment(d)),
        None => format!(
            "{work_iri}/undated-{}",
            &content_hash[..content_hash.len().min(12)]
        ),
    }
}

/// An article slug: `47` or `133-1` for 第一百三十三条之一.
pub fn article_slug(main: u32, suffix: u32) -> String {
    if suffix == 0 {
        format!("art_{main}")
    } else {
        format!("art_{main}-{suffix}")
    }
}

/// The article an IRI names, as `(number, 之N suffix)`: `…/art_133-1` → `(133, 1)`; also
/// for the IRIs below the article (`…/art_47/par_2`). `None` when no article is named.
pub fn parse_article(iri: &str) -> Option<(u32, u32)> {
    let (_, rest) = iri.rsplit_once("/art_")?;
    let slug = rest.split('/').next()?;
    match slug.split_once('-') {
        Some((main, suffix)) => Some((main.parse().ok()?, suffix.parse().ok()?)),
        None => Some((slug.parse().ok()?, 0)),
    }
}

/// The version (or work) an article IRI belongs to: `…/2012-12-28/art_47` →
/// `…/2012-12-28`; an IRI that names no article is returned as it is.
pub fn article_parent(iri: &str) -> &str {
    iri.rsplit_once("/art_").map(|(v, _)| v).unwrap_or(iri)
}

/// An article across versions (child of the work).
pub fn article_work(work_iri: &str, main: u32, suffix: u32) -> String {
    format!("{work_iri}/{}", article_slug(main, suffix))
}

/// An article of one version.
pub fn article(version_iri: &str, main: u32, suffix: u32) -> String {
    format!("{version_iri}/{}", article_slug(main, suffix))
}

pub fn paragraph(article_iri: &str, number: u32) -> String {
    format!("{article_iri}/par_{number}")
}

pub fn item(paragraph_iri: &str, number: u32) -> String {
    format!("{paragraph_iri}/pnt_{number}")
}

/// A division below `parent_iri` (the version or another division): `chp_2`, or the
/// segment-encoded label for unnumbered ones (`chp_附则`).
pub fn division(parent_iri: &str, kind_slug: &str, number: Option<u32>, label: &str) -> String {
    match number {
        Some(n) => format!("{parent_iri}/{kind_slug}_{n}"),
        None => format!("{parent_iri}/{kind_slug}_{}", segment(label)),
    }
}

/// A concept defined by a law (one per term and law work, whichever version defines it).
pub fn concept(work_iri: &str, term: &str) -> String {
    format!("{work_iri}/concept/{}", segment(term))
}

/// The `n`-th reference (0-based) written in a paragraph or item.
pub fn reference(provision_iri: &str, n: usize) -> String {
    format!("{provision_iri}/ref_{n}")
}

/// The `n`-th override clause written in a paragraph or item.
pub fn clause(provision_iri: &str, n: usize) -> String {
    format!("{provision_iri}/clause_{n}")
}

/// The diff from version `from_iri` to `to_iri` of one law: `…/2022-10-30/diff/2018-10-26`.
pub fn version_diff(to_iri: &str, from_iri: &str) -> String {
    let from = from_iri.rsplit('/').next().unwrap_or(from_iri);
    format!("{to_iri}/diff/{from}")
}

pub fn article_change(diff_iri: &str, n: usize) -> String {
    format!("{diff_iri}/change_{n}")
}

/// A topic cluster (`topic_3`) or a domain (`domain_1`) of articles.
pub fn domain(level: &str, n: usize) -> String {
    format!("{ELI_BASE}_domains/{level}_{n}")
}

/// A fused entity, by its normalized label.
pub fn entity(normalized_label: &str) -> String {
    format!("{ELI_BASE}_entities/{}", segment(normalized_label))
}

/// The `n`-th fusion decision of a build.
pub fn fusion_decision(n: usize) -> String {
    format!("{ELI_BASE}_entities/decision_{n}")
}

pub fn build(build_id: &str) -> String {
    format!("{BUILD_BASE}{}", segment(build_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_iris_round_trip_with_their_suffix() {
        let v = "https://w3id.org/coal/eli/cn/刑法/2020-12-26";
        for (main, suffix) in [(1, 0), (47, 0), (133, 1), (120, 6)] {
            let a = article(v, main, suffix);
            assert_eq!(parse_article(&a), Some((main, suffix)), "{a}");
            assert_eq!(parse_article(&paragraph(&a, 2)), Some((main, suffix)));
            assert_eq!(article_parent(&a), v);
        }
        assert_eq!(parse_article(v), None);
        assert_eq!(article_parent(v), v);
        assert_eq!(parse_article(&format!("{v}/art_x")), None);
    }

    #[test]
    fn scheme_is_stable_and_readable() {
        let w = work("劳动合同法");
        assert_eq!(w, "https://w3id.org/coal/eli/cn/劳动合同法");
        let v = version(&w, Some("2012-12-28"), "abc");
        assert_eq!(v, "https://w3id.org/coal/eli/cn/劳动合同法/2012-12-28");
        assert_eq!(article(&v, 47, 0), format!("{v}/art_47"));
        assert_eq!(article_work(&w, 133, 1), format!("{w}/art_133-1"));
        assert_eq!(
            item(&paragraph(&article(&v, 2, 0), 1), 3),
            format!("{v}/art_2/par_1/pnt_3")
        );
        assert_eq!(division(&v, "chp", None, "附则"), format!("{v}/chp_附则"));
        assert_eq!(
            version(&w, None, "0123456789abcdef"),
            format!("{w}/undated-0123456789ab")
        );
    }

    #[test]
    fn segments_escape_what_iris_forbid() {
        assert_eq!(
            segment("最高人民法院 最高人民检察院"),
            "最高人民法院%20最高人民检察院"
        );
        assert_eq!(segment("a/b#c"), "a%2Fb%23c");
        assert_eq!(segment("监\u{3000}护"), "监%E3%80%80护");
        assert_eq!(segment("（三）"), "（三）");
    }
}
