//! Intrinsic complexity (METHOD.md §3): the question's type by pattern, its decomposition
//! into sub-queries, entities, constraints, domains and relations by rules, and Eq. 1–4.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use crate::method::MethodConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    /// 法条查询: "X法第N条的内容是什么"
    ArticleLookup,
    /// 概念定义: "什么是X"
    ConceptDefinition,
    /// 简单列举: "X包括哪些"
    SimpleEnumeration,
    /// 元信息: purpose, scope, effective date
    MetaInformation,
    /// 场景推理
    ScenarioReasoning,
    /// 条件判断
    ConditionalJudgment,
    /// 多条件组合
    MultiCondition,
    /// 权益维护
    RightsProtection,
    /// 跨领域
    CrossDomain,
    /// 复杂列举
    ComplexEnumeration,
    /// 一般复杂
    General,
}

impl QuestionType {
    pub fn c_base(self) -> f64 {
        use QuestionType::*;
        match self {
            ArticleLookup => 0.10,
            ConceptDefinition => 0.15,
            SimpleEnumeration | MetaInformation => 0.20,
            ScenarioReasoning | MultiCondition => 0.50,
            ConditionalJudgment | General => 0.45,
            RightsProtection => 0.55,
            CrossDomain => 0.60,
            ComplexEnumeration => 0.40,
        }
    }

    /// Weights over (RCL, KIR, RRC, DS, CCD); `None` for the simple types.
    pub fn weights(self) -> Option<[f64; 5]> {
        use QuestionType::*;
        Some(match self {
            ArticleLookup | ConceptDefinition | SimpleEnumeration | MetaInformation => return None,
            ScenarioReasoning => [0.35, 0.25, 0.25, 0.10, 0.05],
            ConditionalJudgment => [0.25, 0.25, 0.30, 0.15, 0.05],
            MultiCondition => [0.30, 0.25, 0.20, 0.10, 0.15],
            RightsProtection => [0.35, 0.30, 0.20, 0.10, 0.05],
            CrossDomain => [0.25, 0.30, 0.20, 0.20, 0.05],
            ComplexEnumeration => [0.25, 0.30, 0.25, 0.15, 0.05],
            General => [0.30, 0.25, 0.20, 0.15, 0.10],
        })
    }

    pub fn is_simple(self) -> bool {
        self.weights().is_none()
    }
}

/// What the graph knows by name: laws and defined concepts, each with its domain.
#[derive(Debug, Default, Clone)]
pub struct Lexicon {
    names: HashMap<String, Entity>,
    longest: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entity {
    pub name: String,
    pub kind: EntityKind,
    /// The law's short name (for a concept, the law that defines it).
    pub law: String,
    /// The domain the entity belongs to.
    pub domain: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityKind {
    Law,
    Concept,
    /// Named by an LLM decomposition but unknown to the graph.
    Unlinked,
}

impl Lexicon {
    /// Adds a name; the first entry of a name wins (laws are added before concepts).
    pub fn add(&mut self, name: &str, kind: EntityKind, law: &str, domain: &str) {
        let n = name.trim();
        if n.chars().count() < 2 {
            return;
        }
        self.longest = self.longest.max(n.chars().count());
        self.names.entry(n.to_owned()).or_insert_with(|| Entity {
            name: n.to_owned(),
            kind,
            law: law.to_owned(),
            domain: domain.to_owned(),
        });
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Entity> {
        self.names.get(name)
    }

    /// Longest non-overlapping matches, left to right.
    pub fn find(&self, text: &str) -> Vec<Entity> {
        // Byte offsets of every character (and the end): windows are slices, not copies.
        let at: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(text.len()))
            .collect();
        let n = at.len() - 1;
        let mut out = Vec::new();
        let mut i = 0;
        while i < n {
            let max = self.longest.min(n - i);
            let hit = (2..=max)
                .rev()
                .find_map(|len| self.names.get(&text[at[i]..at[i + len]]).map(|e| (e, len)));
            match hit {
                Some((e, len)) => {
                    out.push(e.clone());
                    i += len;
                }
                None => i += 1,
            }
        }
        out
    }
}

/// The question taken apart.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Decomposition {
    pub sub_queries: Vec<String>,
    pub entities: Vec<Entity>,
    pub constraints: Vec<String>,
    pub domains: Vec<String>,
    pub relations: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dimension {
    pub name: &'static str,
    pub value: usize,
    pub score: f64,
    pub weight: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Intrinsic {
    pub question_type: QuestionType,
    pub c_base: f64,
    pub decomposition: Decomposition,
    /// RCL, KIR, RRC, DS, CCD (empty for the simple types).
    pub dimensions: Vec<Dimension>,
    pub c_5d: f64,
    pub c_intrinsic: f64,
}

/// Characters of a question the rules read; the rest is ignored (100 kB questions).
pub const MAX_QUESTION_CHARS: usize = 2_000;

fn regexes() -> &'static Regexes {
    static R: OnceLock<Regexes> = OnceLock::new();
    R.get_or_init(Regexes::new)
}

struct Regexes {
    article: Regex,
    constraint: Regex,
}

const NUM: &str = "[0-9０-９一二三四五六七八九十百千万两半零〇几]+";

impl Regexes {
    fn new() -> Regexes {
        let constraint = format!(
            "(?:{NUM}(?:周岁|岁))|(?:{NUM}(?:个)?(?:年|月|日|天|周|星期|小时|工作日))|(?:{NUM}(?:元|万元|块|万|亿元))|(?:{NUM}(?:次|人|名|个|项|倍|级))|(?:百分之{NUM}|{NUM}%|{NUM}成)|(?:[0-9]{{4}}年(?:[0-9]{{1,2}}月)?(?:[0-9]{{1,2}}[日号])?)"
        );
        Regexes {
            article: Regex::new(&format!("第{NUM}条")).unwrap(),
            constraint: Regex::new(&constraint).unwrap(),
        }
    }
}

const LOOKUP_TAILS: &[&str] = &[
    "的内容",
    "内容是什么",
    "规定了什么",
    "怎么规定",
    "是怎样规定",
    "说的是什么",
    "原文",
];
const DEFINITION: &[&str] = &[
    "什么是",
    "何为",
    "何谓",
    "的定义",
    "的含义",
    "是指什么",
    "指的是什么",
    "是什么意思",
];
const ENUMERATION: &[&str] = &[
    "包括哪些",
    "有哪些",
    "哪几种",
    "哪些种类",
    "哪几类",
    "包含哪些",
    "分为哪些",
    "列举",
];
const META: &[&str] = &[
    "立法目的",
    "立法宗旨",
    "适用于哪些",
    "适用范围",
    "施行日期",
    "何时施行",
    "何时起施行",
    "什么时候施行",
    "生效日期",
    "何时生效",
    "什么时候生效",
    "制定依据",
    "主管部门",
];
const NARRATIVE: &[&str] = &[
    "我", "某", "他", "她", "老板", "公司", "单位", "员工", "职工", "朋友", "父母", "孩子", "丈夫",
    "妻子", "老公", "老婆", "邻居", "房东",
];
const CONDITION: &[&str] = &[
    "如果",
    "假如",
    "若",
    "倘若",
    "要是",
    "如",
    "在…情况下",
    "的情况下",
    "的话",
];
const JUDGMENT: &[&str] = &[
    "是否",
    "能否",
    "可否",
    "可不可以",
    "能不能",
    "算不算",
    "合法吗",
    "违法吗",
    "有效吗",
    "吗",
];
const RIGHTS: &[&str] = &[
    "维权",
    "赔偿",
    "索赔",
    "补偿",
    "怎么办",
    "如何处理",
    "起诉",
    "仲裁",
    "投诉",
    "举报",
    "权益",
    "讨要",
    "追讨",
];
const CONNECTIVES: &[&str] = &[
    "如果", "假如", "但是", "但", "并且", "而且", "或者", "除非", "是否", "因为", "所以", "虽然",
    "即使", "否则", "只要", "只有", "同时", "导致", "由于", "以及",
];
const QUESTION_MARKERS: &[&str] = &[
    "？", "?", "吗", "么", "什么", "哪", "如何", "怎么", "怎样", "多少", "是否", "能否", "可否",
    "几", "谁",
];

fn contains_any(text: &str, pats: &[&str]) -> bool {
    pats.iter().any(|p| text.contains(p))
}

fn count_any(text: &str, pats: &[&str]) -> usize {
    pats.iter().map(|p| text.matches(p).count()).sum()
}

/// Splits into clauses and keeps those that ask something; at least one.
fn sub_queries(q: &str) -> Vec<String> {
    let mut clauses: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in q.chars() {
        cur.push(c);
        if matches!(c, '。' | '？' | '?' | '！' | '!' | '；' | ';' | '\n') {
            clauses.push(std::mem::take(&mut cur));
        }
    }
    clauses.push(cur);
    let asking: Vec<String> = clauses
        .into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty() && contains_any(c, QUESTION_MARKERS))
        .collect();
    if asking.is_empty() {
        vec![q.trim().to_owned()]
    } else {
        asking
    }
}

/// The question type by pattern (simple types first).
pub fn classify(q: &str, decomposition: &Decomposition) -> QuestionType {
    use QuestionType::*;
    let short = q.chars().count() <= 40;
    let narrative = contains_any(q, NARRATIVE);
    if regexes().article.is_match(q) && (contains_any(q, LOOKUP_TAILS) || short && !narrative) {
        return ArticleLookup;
    }
    if short && !narrative && decomposition.sub_queries.len() <= 1 {
        if contains_any(q, DEFINITION) {
            return ConceptDefinition;
        }
        if contains_any(q, META) {
            return MetaInformation;
        }
        if contains_any(q, ENUMERATION) {
            return SimpleEnumeration;
        }
    }
    if decomposition.domains.len() >= 2 {
        return CrossDomain;
    }
    if contains_any(q, RIGHTS) {
        return RightsProtection;
    }
    let conditions = count_any(q, &CONDITION[..5]);
    if conditions >= 2 || conditions >= 1 && decomposition.constraints.len() >= 2 {
        return MultiCondition;
    }
    if conditions >= 1 || contains_any(q, JUDGMENT) {
        return ConditionalJudgment;
    }
    if contains_any(q, ENUMERATION) {
        return ComplexEnumeration;
    }
    if narrative {
        return ScenarioReasoning;
    }
    General
}

/// Decomposition by rules: clauses, dictionary entities, constraint regexes, the domains of
/// the entities and the logical connectives.
pub fn decompose(q: &str, lexicon: &Lexicon) -> Decomposition {
    let q: String = q.chars().take(MAX_QUESTION_CHARS).collect();
    let entities = lexicon.find(&q);
    let domains: BTreeSet<String> = entities
        .iter()
        .filter(|e| !e.domain.is_empty())
        .map(|e| e.domain.clone())
        .collect();
    let constraints = regexes()
        .constraint
        .find_iter(&q)
        .map(|m| m.as_str().to_owned())
        .collect();
    let mut relations = Vec::new();
    let mut rest = q.clone();
    // Longest connectives first, each occurrence once (但是 is not also 但).
    let mut conns: Vec<&str> = CONNECTIVES.to_vec();
    conns.sort_by_key(|c| std::cmp::Reverse(c.chars().count()));
    for c in conns {
        for _ in 0..rest.matches(c).count() {
            relations.push(c.to_owned());
        }
        rest = rest.replace(c, "|");
    }
    Decomposition {
        sub_queries: sub_queries(&q),
        entities,
        constraints,
        domains: domains.into_iter().collect(),
        relations,
    }
}

/// Eq. 1–4 over a decomposition and type.
pub fn score(question_type: QuestionType, d: Decomposition, cfg: &MethodConfig) -> Intrinsic {
    let c_base = question_type.c_base();
    let Some(w) = question_type.weights() else {
        return Intrinsic {
            question_type,
            c_base,
            decomposition: d,
            dimensions: Vec::new(),
            c_5d: 0.0,
            c_intrinsic: c_base,
        };
    };
    let eq1 = |v: usize| ((v as f64 - 1.0) / cfg.n).clamp(0.0, 1.0);
    let eq2 = |v: usize| (v as f64 / cfg.n).min(1.0);
    let distinct_entities = d
        .entities
        .iter()
        .map(|e| e.name.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let values = [
        ("RCL", d.sub_queries.len(), true),
        ("KIR", distinct_entities.max(d.sub_queries.len()), true),
        ("RRC", d.relations.len(), false),
        ("DS", d.domains.len(), true),
        ("CCD", d.constraints.len(), false),
    ];
    let dimensions: Vec<Dimension> = values
        .iter()
        .zip(w)
        .map(|(&(name, value, minus_one), weight)| Dimension {
            name,
            value,
            score: if minus_one { eq1(value) } else { eq2(value) },
            weight,
        })
        .collect();
    let c_5d = dimensions.iter().map(|x| x.weight * x.score).sum::<f64>();
    Intrinsic {
        question_type,
        c_base,
        decomposition: d,
        dimensions,
        c_5d,
        c_intrinsic: cfg.alpha * c_base + cfg.beta * c_5d,
    }
}

/// Classifies, decomposes and scores a question.
pub fn intrinsic(q: &str, lexicon: &Lexicon, cfg: &MethodConfig) -> Intrinsic {
    from_decomposition(q, decompose(q, lexicon), cfg)
}

/// Eq. 1–4 for a decomposition made elsewhere (by an LLM).
pub fn from_decomposition(q: &str, d: Decomposition, cfg: &MethodConfig) -> Intrinsic {
    let t = classify(q, &d);
    score(t, d, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        let mut l = Lexicon::default();
        l.add("劳动合同法", EntityKind::Law, "劳动合同法", "社会法");
        l.add("劳动合同", EntityKind::Concept, "劳动合同法", "社会法");
        l.add("用人单位", EntityKind::Concept, "劳动合同法", "社会法");
        l.add("劳动者", EntityKind::Concept, "劳动合同法", "社会法");
        l.add("夫妻共同财产", EntityKind::Concept, "民法典", "民法典");
        l
    }

    #[test]
    fn the_papers_worked_example_scores() {
        // Scenario reasoning; 4 sub-queries, 8 entities, 3 relations, 3 domains, 4 constraints.
        let entity = |i: usize| Entity {
            name: format!("e{i}"),
            kind: EntityKind::Concept,
            law: String::new(),
            domain: String::new(),
        };
        let d = Decomposition {
            sub_queries: (0..4).map(|i| format!("q{i}")).collect(),
            entities: (0..8).map(entity).collect(),
            constraints: (0..4).map(|i| format!("c{i}")).collect(),
            domains: (0..3).map(|i| format!("d{i}")).collect(),
            relations: (0..3).map(|i| format!("r{i}")).collect(),
        };
        let cfg = MethodConfig::paper();
        let s = score(QuestionType::ScenarioReasoning, d, &cfg);
        let scores: Vec<f64> = s.dimensions.iter().map(|d| d.score).collect();
        assert_eq!(scores, vec![0.75, 1.0, 0.75, 0.5, 1.0]);
        assert!((s.c_5d - 0.80).abs() < 1e-9, "{}", s.c_5d);
        assert!((s.c_intrinsic - 0.71).abs() < 1e-9);
        // Eq. 9 with the consistency example's 0.871.
        let c_final = cfg.gamma * s.c_intrinsic + (1.0 - cfg.gamma) * 0.871;
        assert!((c_final - 0.79).abs() < 1e-3);
    }

    #[test]
    fn simple_types_by_pattern() {
        let l = lexicon();
        let t = |q: &str| intrinsic(q, &l, &MethodConfig::paper()).question_type;
        assert_eq!(
            t("《中华人民共和国劳动法》第四十八条的内容是什么？"),
            QuestionType::ArticleLookup
        );
        assert_eq!(
            t("民法商法农民专业合作社法第三十三条的内容是什么？"),
            QuestionType::ArticleLookup
        );
        assert_eq!(t("什么是劳动合同？"), QuestionType::ConceptDefinition);
        assert_eq!(
            t("劳动合同必备条款包括哪些？"),
            QuestionType::SimpleEnumeration
        );
        assert_eq!(
            t("《劳动法》的立法目的是什么？"),
            QuestionType::MetaInformation
        );
        let i = intrinsic("什么是劳动合同？", &l, &MethodConfig::paper());
        assert_eq!(i.c_intrinsic, 0.15);
        assert!(i.dimensions.is_empty());
    }

    #[test]
    fn complex_types_and_their_dimensions() {
        let l = lexicon();
        let cfg = MethodConfig::paper();
        let i = intrinsic(
            "我在公司工作了3年，如果用人单位不签劳动合同，我能要求2倍工资吗？离婚时夫妻共同财产怎么分？",
            &l,
            &cfg,
        );
        assert_eq!(i.question_type, QuestionType::CrossDomain);
        let d = &i.decomposition;
        assert_eq!(d.sub_queries.len(), 2);
        assert_eq!(d.domains, vec!["民法典".to_owned(), "社会法".to_owned()]);
        assert_eq!(d.constraints, vec!["3年".to_owned(), "2倍".to_owned()]);
        assert!(d.relations.contains(&"如果".to_owned()));
        let names: Vec<&str> = d.entities.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["用人单位", "劳动合同", "夫妻共同财产"]);
        assert!(i.c_intrinsic > 0.3 && i.c_intrinsic < 0.9);
        let t = |q: &str| intrinsic(q, &l, &cfg).question_type;
        assert_eq!(
            t("公司拖欠工资三个月，我该怎么办？"),
            QuestionType::RightsProtection
        );
        assert_eq!(
            t("试用期内用人单位可以随时解除劳动合同吗？"),
            QuestionType::ConditionalJudgment
        );
        assert_eq!(t("某员工在试用期被辞退。"), QuestionType::ScenarioReasoning);
    }

    #[test]
    fn huge_questions_are_read_up_to_a_bound() {
        let q = "劳动合同".repeat(50_000);
        let d = decompose(&q, &lexicon());
        assert_eq!(d.entities.len(), MAX_QUESTION_CHARS / 4);
    }
}
