//! Reading one clause of a statute the way its drafting conventions are written: where
//! the object stands, which modal verb governs it, who stands in front of that verb, and
//! which word comes right before the object.

use std::collections::HashSet;

/// Modal verbs that open a right or a duty; the text in front of one is its actor.
pub(super) const MODALS: &[&str] = &["有权", "可以", "享有", "应当", "必须", "不得"];

/// Words that may stand between an actor and its modal verb (职工也应当…, 并可以…).
const ADVERBS: &[&str] = &[
    "并", "也", "还", "均", "都", "依法", "同时", "亦", "应", "即", "则", "仍", "另", "一律",
    "方可", "才",
];

/// How a consent phrase opens (经与工会和劳动者协商后, 经劳动行政部门批准, 与…协商一致):
/// the parties it names agree, the actor stands before it.
const CONSENT_OPENERS: &[&str] = &["经", "与", "同"];

/// The clauses of an article: its sentences, cut at 。, ； and line ends (款, 项).
pub(super) fn clauses(article: &str) -> impl Iterator<Item = &str> {
    article
        .split(['。', '；', '\n'])
        .filter(|c| !c.trim().is_empty())
}

/// The clause of `article` that holds most of `object`, if one holds enough of it
/// (whole, or 80% of its character bigrams).
pub(super) fn object_clause<'a>(article: &'a str, object: &str) -> Option<&'a str> {
    let wanted = bigrams(object);
    let mut best: Option<(&str, f64)> = None;
    for c in clauses(article) {
        let share = if c.contains(object) {
            1.0
        } else if wanted.is_empty() {
            0.0
        } else {
            wanted.intersection(&bigrams(c)).count() as f64 / wanted.len() as f64
        };
        if best.is_none_or(|(_, b)| share > b) {
            best = Some((c, share));
        }
    }
    best.filter(|(_, s)| *s >= 0.8).map(|(c, _)| c)
}

fn bigrams(s: &str) -> HashSet<(char, char)> {
    let c: Vec<char> = s.chars().collect();
    c.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Whether `actor` names a party other than `subject` (either holding the other counts
/// as the same party: 县级以上人民政府 and 人民政府).
pub(super) fn another_party(actor: &str, subject: &str) -> bool {
    !actor.is_empty() && !actor.contains(subject) && !subject.contains(actor)
}

/// Whether some cue word of `cue` starts before the end of the last place `object` is in
/// `clause` (inside the object counts). `None` when the object is not in the clause
/// verbatim (a bigram match has no position).
pub(super) fn cue_before_object(clause: &str, object: &str, cue: &[&str]) -> Option<bool> {
    let end = clause.rfind(object)? + object.len();
    Some(cue.iter().filter_map(|w| clause.find(w)).any(|at| at < end))
}

/// The actor the object names in front of its first modal verb, after the last comma
/// (有关单位应当予以协助 → 有关单位); `None` without a modal verb.
pub(super) fn actor_in_object(object: &str) -> Option<&str> {
    let at = MODALS.iter().filter_map(|m| object.find(m)).min()?;
    let before = &object[..at];
    before.rsplit(['，', ',']).next().map(str::trim)
}

/// Whether the first place `object` stands verbatim in `article` comes right after one
/// of `words` (对仲裁裁决不服: 仲裁裁决 after 对; later places may be inside longer words,
/// 仲裁裁决书). False when it stands nowhere verbatim.
pub(super) fn first_after(article: &str, object: &str, words: &[&str]) -> bool {
    article
        .find(object)
        .is_some_and(|at| words.iter().any(|w| article[..at].ends_with(w)))
}

/// Whether the article names `party` only as the one harmed: after 对 or 给 with 造成
/// later in the same segment (对用人单位造成经济损失的).
pub(super) fn harmed_only(article: &str, party: &str) -> bool {
    let mut places = article.match_indices(party).peekable();
    places.peek().is_some()
        && places.all(|(at, _)| {
            let rest = &article[at + party.len()..];
            let segment = &rest[..rest.find(['，', '；', '。', '\n']).unwrap_or(rest.len())];
            ["对", "给"].iter().any(|w| article[..at].ends_with(w)) && segment.contains("造成")
        })
}

/// Whether every place the object stands verbatim in `article` comes right after one of
/// `verbs`, or after one of them and a party it names (约定保守商业秘密; 保障劳动者享有劳动
/// 权利和履行劳动义务; 申请人民法院强制执行), with no comma between: the clause's right or
/// duty is that verb's, or the named party's act. (申请办理社会保险登记: no party between,
/// 办理 governs the object.)
pub(super) fn governed_by(article: &str, object: &str, verbs: &[&str]) -> bool {
    /// How far back the verb may stand, in characters (a party's name and 享有…和).
    const REACH: usize = 12;
    let mut places = article.match_indices(object).peekable();
    places.peek().is_some()
        && places.all(|(at, _)| {
            let from = article[..at]
                .char_indices()
                .rev()
                .nth(REACH - 1)
                .map_or(0, |(i, _)| i);
            let window = &article[from..at];
            verbs.iter().any(|v| {
                window.rfind(v).is_some_and(|i| {
                    let between = &window[i + v.len()..];
                    !between.contains(['，', ',', '；', '。', '：', '\n'])
                        && (between.is_empty() || names_party(between))
                })
            })
        })
}

/// Words that end the name of a party (劳动者, 用人单位, 有关部门, 人民法院 …).
const PARTY_WORDS: &[&str] = &[
    "人", "者", "单位", "组织", "机构", "部门", "法院", "政府", "企业", "工会", "职工", "力量",
    "家庭", "机关", "学校",
];

/// Whether `text` names a party.
fn names_party(text: &str) -> bool {
    PARTY_WORDS.iter().any(|w| text.contains(w))
}

/// Whether `clause` gives the object's right or duty to someone other than `subject`, at
/// every place it states the object (`None` when no place says who has it: no cue of the
/// relation before it and no 由).
pub(super) fn gives_to_another(
    clause: &str,
    subject: &str,
    object: &str,
    cue: &[&str],
) -> Option<bool> {
    // The subject's own modal verb in front of the object's verb (职工应当缴纳的社会保险费
    // for 缴纳社会保险费) gives it to the subject, whatever else the clause says.
    let head: String = object.chars().take(2).collect();
    if cue
        .iter()
        .any(|w| clause.contains(&format!("{subject}{w}{head}")))
    {
        return Some(false);
    }
    let verdicts: Vec<bool> = clause
        .match_indices(object)
        .filter_map(|(at, _)| gives_at(clause, at, subject, object, cue))
        .collect();
    (!verdicts.is_empty()).then(|| verdicts.iter().all(|another| *another))
}

/// Whether the object at `at` goes to someone other than `subject`: 由 naming the subject
/// in its segment gives it to the subject (由个人按照国家规定缴纳…); else the relation's
/// cue nearest before the object (or opening it: 不得违反…) has an actor in front of it
/// that is not the subject, and the subject is not named between that actor and the
/// object (职工应当参加…，由用人单位和职工共同缴纳… names who pays); or the subject first
/// appears after the cue, not introduced by 由 (劳动者可以…向人民法院申请支付令: the court is
/// addressed, it holds no right here).
fn gives_at(clause: &str, at: usize, subject: &str, object: &str, cue: &[&str]) -> Option<bool> {
    let segment = &clause[segment_start(clause, at)..at];
    if segment
        .find('由')
        .is_some_and(|by| segment[by..].contains(subject))
    {
        return Some(false);
    }
    let opening = cue
        .iter()
        .filter(|w| object.starts_with(**w))
        .map(|w| w.len())
        .max()
        .unwrap_or(0);
    let modal = cue
        .iter()
        .filter_map(|w| clause[..at + opening].rfind(w))
        .max()?;
    let actor = actor_before(clause, modal);
    let named_between = clause[actor.start..at]
        .replace(&clause[actor.consent.clone()], "")
        .contains(subject);
    let another_actor = another_party(actor.name, subject) && !named_between;
    let addressed = clause.find(subject).is_some_and(|first| {
        first > modal && clause[..first].chars().rev().take(3).all(|c| c != '由')
    });
    Some(another_actor || addressed)
}

/// Where the comma segment holding byte `end` of `text` starts (after a comma, colon or
/// the end of a sentence: `text` may be a clause or a whole article).
fn segment_start(text: &str, end: usize) -> usize {
    text[..end]
        .char_indices()
        .rfind(|(_, c)| matches!(c, '，' | ',' | '：' | ':' | '。' | '；' | '\n'))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Who stands in front of a modal verb.
struct Actor<'a> {
    /// The actor, without adverbs (也, 依法 …).
    name: &'a str,
    /// Where the actor's segment starts in the clause.
    start: usize,
    /// The consent phrase between the actor and the modal verb, if any (empty range).
    consent: std::ops::Range<usize>,
}

/// The actor of the modal verb at `modal`: the text after the last comma or colon before
/// it; when that text is a consent phrase (经与工会和劳动者协商后), the segment before it.
fn actor_before(clause: &str, modal: usize) -> Actor<'_> {
    let mut start = segment_start(clause, modal);
    let mut end = modal;
    let mut consent = start..start;
    if start > 0
        && CONSENT_OPENERS
            .iter()
            .any(|o| clause[start..].starts_with(o))
    {
        consent = start..modal;
        end = clause[..start].trim_end_matches(['，', ',']).len();
        start = segment_start(clause, end);
    }
    let mut name = clause[start..end].trim();
    for adverb in ADVERBS {
        name = name.strip_suffix(adverb).unwrap_or(name);
    }
    Actor {
        name: name.trim(),
        start,
        consent,
    }
}

/// Whether the first place `object` stands verbatim in `article` is in the conduct a
/// condition lists before its …的， (干涉老年人婚姻自由，…虐待老年人…的，由有关单位给予
/// 批评教育): a 的， follows it in its clause with no modal verb or 由 between.
pub(super) fn in_condition(article: &str, object: &str) -> bool {
    let Some(at) = article.find(object) else {
        return false;
    };
    let rest = &article[at + object.len()..];
    let rest = &rest[..rest.find(['。', '；', '\n']).unwrap_or(rest.len())];
    rest.find("的，").is_some_and(|end| {
        let conduct = &rest[..end];
        !MODALS.iter().chain(&["由"]).any(|m| conduct.contains(m))
    })
}

/// Whether `object` is a party the article gives a modal verb right after it (民族自治地方
/// 的人民代表大会，可以…): the object holds no modal verb itself, and one follows its first
/// verbatim place after a comma and an adverb at most.
pub(super) fn addressed_party(article: &str, object: &str) -> bool {
    if MODALS.iter().any(|m| object.contains(m)) {
        return false;
    }
    let Some(at) = article.find(object) else {
        return false;
    };
    let rest = article[at + object.len()..].trim_start_matches(['，', ',']);
    let opens_with_modal = |text: &str| MODALS.iter().any(|m| text.starts_with(m));
    opens_with_modal(rest)
        || ADVERBS
            .iter()
            .any(|a| rest.strip_prefix(a).is_some_and(opens_with_modal))
}

/// Words between 不得 and its verb that do not end its reach: after a conjunction or
/// another modal verb, the verb is not the one forbidden.
const ENDS_PROHIBITION: &[&str] = &["应当", "可以", "有权", "必须", "并", "和", "或者"];

/// Whether the article forbids `object`: right after 不得, 不 or 禁止 at some place
/// (不得拒绝检查), or, at every place it stands verbatim, a 不得 or 禁止 earlier in its
/// comma segment governs it through an adverbial only (不得以任何方式侵害…, 不得擅自
/// 改变…): the duty is not to do it.
pub(super) fn forbidden(article: &str, object: &str) -> bool {
    if ["不得", "不", "禁止"]
        .iter()
        .any(|n| article.contains(&format!("{n}{object}")))
    {
        return true;
    }
    let mut places = article.match_indices(object).peekable();
    places.peek().is_some()
        && places.all(|(at, _)| {
            let segment = &article[segment_start(article, at)..at];
            ["不得", "禁止"]
                .iter()
                .filter_map(|n| segment.rfind(n).map(|i| i + n.len()))
                .max()
                .is_some_and(|from| !ENDS_PROHIBITION.iter().any(|w| segment[from..].contains(w)))
        })
}

/// What may stand right before a party that acts, in its comma segment: 由 and 经 name
/// who acts, 的 ends its description (…企业的工会委员会), 保障/使/确保 name the holder of
/// a right (保障公民…获得…的权利), and 中华人民共和国 is the part of a party's name the
/// triple's terms drop (中华人民共和国境内的用人单位和个人).
const BEFORE_AN_ACTOR: &[&str] = &[
    "由",
    "经",
    "凡",
    "的",
    "保障",
    "使",
    "确保",
    "并",
    "但",
    "中华人民共和国",
];

/// Words that join parties into one list of actors (政府有关部门、残疾人所在单位和…).
const PARTY_JOINERS: &[&str] = &["以及", "和", "及", "或者", "、", "与"];

/// Whether the clauses stating `object` name `subject` as one who acts, where they name it
/// before the object's end: at the head of a comma segment, after a word of
/// [`BEFORE_AN_ACTOR`], or in a list of parties. False when every such clause names it
/// only inside another's phrase (继承父母、配偶、子女或者其他亲属遗产; 承担该老年人…;
/// 向国家机关提出). `clause` is the object's clause when it is nowhere verbatim.
pub(super) fn subject_acts(article: &str, subject: &str, object: &str, clause: &str) -> bool {
    let verbatim: Vec<&str> = clauses(article).filter(|c| c.contains(object)).collect();
    let holders = if verbatim.is_empty() {
        vec![clause]
    } else {
        verbatim
    };
    holders.iter().any(|c| {
        let end = c.find(object).map_or(c.len(), |at| at + object.len());
        let mut places = c[..end].match_indices(subject).peekable();
        places.peek().is_none() || places.any(|(at, _)| acts_at(c, at))
    })
}

/// Whether the party at byte `at` of `clause` stands where an actor stands.
fn acts_at(clause: &str, at: usize) -> bool {
    let before = &clause[segment_start(clause, at)..at];
    before.is_empty()
        || BEFORE_AN_ACTOR.iter().any(|w| before.ends_with(w))
        || PARTY_JOINERS.iter().any(|j| {
            before
                .strip_suffix(j)
                .is_some_and(|b| PARTY_WORDS.iter().any(|p| b.ends_with(p)))
        })
}

/// How long a phrase right before a 、 may be to count as a list member: a longer one may
/// open parallel clauses (为社会主义现代化建设服务、为人民服务), which state provisions.
const MEMBER_CHARS: usize = 6;

/// Whether the first place `object` stands verbatim in `article` is one member of an
/// enumeration: 、, 和, 及 or 或者 right before it, or 、 right after a short one (进行理想、
/// 道德、纪律、法治、国防和民族团结的教育; 增强…创新精神和实践能力).
pub(super) fn enumerated(article: &str, object: &str) -> bool {
    article.find(object).is_some_and(|at| {
        let before = &article[..at];
        let after = &article[at + object.len()..];
        ["、", "和", "及", "或者"]
            .iter()
            .any(|j| before.ends_with(j))
            || (after.starts_with('、') && object.chars().count() <= MEMBER_CHARS)
    })
}
