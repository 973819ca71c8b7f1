//! Whether an extracted triple says what its article says. A small model's replies pass
//! the schema yet mostly pair a real term with a relation the article does not state
//! (20 of 100 hand-checked 1.5B triples were correct: `tests/fixtures/checked-triples.jsonl`).
//! These checks keep a triple only when the article supports it on its face:
//!
//! - the object is in one clause of the article (whole, or 80% of its character bigrams),
//!   and is neither the subject, an article number, nor the statute itself;
//! - the subject is in the article, or is the statute itself (本法, its name);
//! - `规定` (the statute provides …) has the statute as its subject; the other relations
//!   need their cue word in the object's clause (主体-权利: 有权/可以/享有 …);
//! - the drafting conventions of Chinese statutes: a clause ending in 的 is a condition
//!   (so it is the subject of 条件-结果, never the object of a right, duty, liability or
//!   result); a right or duty follows its modal verb (可以/应当 …), and one whose modal
//!   verb has another actor in front of it (有关单位应当…) belongs to that actor; a
//!   liability names a sanction (责任, 赔偿, 处分 …); a legal basis (根据…) is not a
//!   provision; a right or duty of one or two characters (制定, 阻挠) says nothing;
//! - written on the third and fourth samples' wrong triples: the actor in front of the
//!   modal verb that governs a right or duty is its holder (职工应当参加… is not the
//!   公务员's duty), unless 由 names another (由用人单位和职工共同缴纳); a party named only
//!   after the modal verb is addressed, not entitled; 不得X is no duty to X; a condition
//!   clause (构成犯罪的) is no party; guaranteeing someone's rights (国家保障…的权利) is a
//!   duty, not a right; the statute defines terms, it is not one; a citation or legal
//!   basis names a law, a rule or an agreement, not an authority;
//! - written on the fifth sample's wrong triples (劳动法): an object right after a
//!   preposition is what the clause is about (对仲裁裁决不服); one a verb of agreeing,
//!   asking or enabling governs is that verb's (约定保守商业秘密, 保障劳动者…履行劳动义务);
//!   the parties of a consent phrase (经与工会协商后可以…) are not its actor; 由X对…处以
//!   and 提请X决定 name who imposes a sanction; 对X造成损失 names the party harmed, not
//!   liable; a list item alone, a bare 如果 condition and 制定本法 are no provision.
//! - written on the sixth sample's wrong triples (老年人权益保障法): a party holds a right
//!   or duty only where its clause names it as the one who acts (at the head of a comma
//!   segment, after 由/经/的, or in a list of parties), not inside another's phrase
//!   (继承父母、子女的遗产; 承担该老年人…; 向国家机关提出); 不得以任何方式侵害 forbids
//!   侵害 as 不得侵害 does; 不承担…义务 is an exemption; 通过X makes X the means; the
//!   conduct listed before …的，由… is a condition, not a provision; a party followed by
//!   its modal verb (民族自治地方的人民代表大会，可以…) is the provision's actor.
//! - written on the seventh sample's wrong triples (教育法, 人口与计划生育法): one line of a
//!   下列 list, one member of an enumeration (…、纪律、法治…) and the object of a
//!   preposition are no provision; the statute is no party to a right, duty, liability or
//!   step; conduct (违反治安管理行为) is no party; a liability is no right.
//!
//! A second hand-checked sample, from laws the first rules were not written on
//! (`tests/fixtures/checked-triples-heldout.jsonl`), measures them.
//!
//! They never add a triple; they only refuse one, with the reason, for the build report.

mod clause;

use crate::extract::Triple;
use clause::{
    MODALS, actor_in_object, addressed_party, another_party, clauses, cue_before_object,
    enumerated, first_after, forbidden, gives_to_another, governed_by, harmed_only, in_condition,
    object_clause, subject_acts,
};

/// Why a triple was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ungrounded {
    /// Subject and object are one term.
    SameTerms,
    /// The object is an article number (第十六条) with a relation other than 引用/依据.
    ArticleNumberObject,
    /// The object is the statute itself with a relation other than 引用/依据.
    StatuteObject,
    ObjectNotInArticle,
    SubjectNotInArticle,
    /// `规定` with a subject other than the statute.
    ProvidesWithoutStatute,
    /// The relation's cue word is not in the object's clause.
    NoCue,
    /// The clause states the relation's cue word only after the object (职工二百人以上的
    /// 企业…的工会，可以…: the object is not what 可以 governs).
    CueAfterObject,
    /// A right, duty, liability or result that is a condition clause (…的).
    ConditionAsObject,
    /// The object's modal verb has an actor other than the subject in front of it.
    ObjectOfAnotherActor,
    /// 主体-责任 whose object names no sanction.
    NoSanction,
    /// 条件-结果 whose subject is not a condition (…的, …时).
    SubjectNotCondition,
    /// 规定 of a legal basis (根据宪法…), which is 依据.
    BasisAsProvision,
    /// A right or duty of one or two characters.
    BareObject,
    /// 主体-责任 whose subject is the authority that imposes the sanction (由社会保险行政
    /// 部门责令…, 处…罚款): the liability is the party's it is imposed on.
    SanctionImposer,
    /// A right or duty that its clause gives to another actor (职工应当参加… for 公务员;
    /// 劳动者…的，用人单位可以解除… for 劳动者), or whose subject the clause names only as
    /// the one addressed after the modal verb (…可以向人民法院申请… for 人民法院).
    AnotherActorInClause,
    /// A duty whose object the article forbids (不得拒绝检查 → 拒绝检查).
    NegationDropped,
    /// A right, duty or liability whose subject is a condition clause (构成犯罪的).
    ConditionAsSubject,
    /// 主体-权利 of guaranteeing someone's rights (国家保障残疾人劳动的权利): a duty.
    GuaranteeAsRight,
    /// 定义 whose subject is the statute, not the defined term.
    StatuteDefined,
    /// 引用/依据 whose object names no law, rule or agreement (依照…国务院规定 → 国务院).
    NoNorm,
    /// A right, duty or liability whose object stands right after a preposition where the
    /// article first states it (对仲裁裁决不服, 由上级工会…): what the clause is about, not
    /// what the party may or must do.
    ObjectOfPreposition,
    /// A right or duty whose object a verb of agreeing, asking or enabling governs (约定
    /// 保守商业秘密, 要求重新处理, 保障劳动者…履行劳动义务): the right is to agree or ask,
    /// or the act is the party's the verb names.
    GovernedByDroppedVerb,
    /// 主体-责任 whose subject the article names only as the party harmed (对用人单位造成
    /// 经济损失的，应当承担赔偿责任: the liability is the one who caused the loss).
    SubjectHarmed,
    /// 规定 of one item of a list ((一)…): the statute provides the list with its lead-in.
    ItemAsProvision,
    /// 规定 of the enactment formula (制定本法).
    EnactmentFormula,
    /// 规定 of the party a provision addresses (民族自治地方的人民代表大会，可以…): the
    /// provision is what it may or must do.
    ActorAsProvision,
    /// 主体-义务 of an exemption (不承担…义务): the article frees the party of a duty.
    ExemptionAsDuty,
    /// A right or duty whose subject the object's clause names only inside another's
    /// phrase (继承父母、子女的遗产, 承担该老年人…, 向国家机关提出): not as the one who acts.
    SubjectNotActor,
    /// 规定 of one member of an enumeration (进行理想、道德、纪律…的教育 → 纪律): the
    /// statute provides the sentence the list is in.
    MemberAsProvision,
    /// A right, duty, liability or procedural step whose subject is the statute: the
    /// statute provides, it is no party.
    StatuteAsParty,
    /// 主体-权利 of a liability (享有民事权利，承担民事责任 → 民事责任).
    LiabilityAsRight,
}

impl Ungrounded {
    pub fn as_str(self) -> &'static str {
        match self {
            Ungrounded::SameTerms => "subject and object are one term",
            Ungrounded::ArticleNumberObject => "object is an article number",
            Ungrounded::StatuteObject => "object is the statute itself",
            Ungrounded::ObjectNotInArticle => "object not in the article",
            Ungrounded::SubjectNotInArticle => "subject not in the article",
            Ungrounded::ProvidesWithoutStatute => "规定 whose subject is not the statute",
            Ungrounded::NoCue => "no cue word of the relation in the object's clause",
            Ungrounded::CueAfterObject => "the relation's cue word only after the object",
            Ungrounded::ConditionAsObject => "object is a condition clause (…的)",
            Ungrounded::ObjectOfAnotherActor => "object's modal verb has another actor",
            Ungrounded::NoSanction => "主体-责任 whose object names no sanction",
            Ungrounded::SubjectNotCondition => "条件-结果 whose subject is not a condition",
            Ungrounded::BasisAsProvision => "规定 of a legal basis (根据…)",
            Ungrounded::BareObject => "right or duty of one or two characters",
            Ungrounded::SanctionImposer => {
                "主体-责任 of the authority that imposes the sanction (由…)"
            }
            Ungrounded::AnotherActorInClause => {
                "the clause gives the right or duty to another actor"
            }
            Ungrounded::NegationDropped => "duty the article forbids (不得… dropped)",
            Ungrounded::ConditionAsSubject => "subject is a condition clause (…的)",
            Ungrounded::GuaranteeAsRight => "right to guarantee others' rights (a duty)",
            Ungrounded::StatuteDefined => "定义 whose subject is the statute",
            Ungrounded::NoNorm => "引用/依据 of no law, rule or agreement",
            Ungrounded::ObjectOfPreposition => "object stands after a preposition (对…, 由…)",
            Ungrounded::GovernedByDroppedVerb => {
                "object governed by a verb the triple drops (约定…, 要求…, 保障…)"
            }
            Ungrounded::SubjectHarmed => "主体-责任 of the party harmed (对…造成损失)",
            Ungrounded::ItemAsProvision => "规定 of one item of a list",
            Ungrounded::EnactmentFormula => "规定 of the enactment formula (制定本法)",
            Ungrounded::ActorAsProvision => "规定 of the party a provision addresses",
            Ungrounded::ExemptionAsDuty => "duty the article exempts from (不承担…)",
            Ungrounded::SubjectNotActor => "subject named in the clause only as another's object",
            Ungrounded::MemberAsProvision => "规定 of one member of an enumeration (…、…)",
            Ungrounded::StatuteAsParty => "right, duty, liability or step of the statute itself",
            Ungrounded::LiabilityAsRight => "主体-权利 of a liability (…责任)",
        }
    }
}

/// Words an article uses when it states the relation.
fn cues(relation: &str) -> &'static [&'static str] {
    match relation {
        "主体-权利" => &["有权", "可以", "享有", "权利"],
        "主体-义务" => &["应当", "必须", "不得", "义务", "应", "须"],
        "主体-责任" => &[
            "责任", "赔偿", "罚款", "处分", "追究", "没收", "吊销", "责令",
        ],
        "定义" => &["是指", "指", "称"],
        "条件-结果" => &["的，", "如果", "凡", "除", "之一", "时，"],
        "修改" => &["修改", "修正"],
        "废止" => &["废止"],
        "生效" => &["施行", "生效"],
        "引用" => &["第", "规定"],
        "依据" => &["依据", "根据", "依照"],
        "适用于" => &["适用"],
        "解释" => &["解释"],
        "层级" => &["上级", "下级", "领导"],
        "隶属" => &["隶属", "领导", "所属"],
        "地域范围" => &["境内", "地区", "区域", "行政区"],
        "时间" => &["日", "月", "年", "期限", "期间"],
        "程序-步骤" => &["程序", "申请", "提交", "审查", "办理", "报"],
        _ => &[],
    }
}

/// What an authority does when it imposes a sanction (由X责令…, 由X处…).
const IMPOSING_VERBS: &[&str] = &["责令", "处", "给予", "没收", "吊销", "依法给予", "予以"];

/// Words after which an object is what the clause is about (对仲裁裁决不服, 由上级工会…,
/// 不得向学校…). Not 以 (可以 and 予以 end in it), nor 将 and 把, which statutes put
/// before a verb phrase too (应当按月将缴纳社会保险费的明细情况告知本人).
const PREPOSITIONS: &[&str] = &[
    "对", "向", "由", "与", "在", "从", "被", "给", "通过", "经过",
];

/// Prepositions whose object is no provision (对提高人民综合素质…具有决定性意义). Not 在,
/// 由 or 从, which a provision's own opening drops (在中国境内的企业… → 中国境内的企业…).
const PROVISION_PREPOSITIONS: &[&str] = &["对", "向", "给", "被"];

/// How a duty's object opens when the article frees the party of it (不承担…筹劳义务).
const EXEMPTIONS: &[&str] = &["不承担", "不负", "免除", "免于", "无须", "无需", "不必"];

/// Verbs of agreeing, asking or enabling: a right or duty whose object one of them governs
/// is to agree, ask or enable, or is the act of the party the verb names.
const GOVERNING_VERBS: &[&str] = &[
    "约定", "要求", "申请", "请求", "提起", "委托", "提请", "保障", "保证", "帮助", "鼓励", "支持",
    "引导", "督促", "扶持", "协助",
];

/// What the object of a citation or legal basis names: a law, a rule, an agreement.
const NORMS: &[&str] = &[
    "法", "条", "规定", "条例", "办法", "决定", "规则", "章程", "标准", "约定", "合同", "政策",
    "规划", "制度", "意见",
];

/// Sanctions besides the 主体-责任 cue words (责任, 赔偿, 罚款, …): a liability's object
/// names one of either list.
const FURTHER_SANCTIONS: &[&str] = &[
    "改正",
    "处罚",
    "拘留",
    "警告",
    "批评",
    "撤销",
    "罢免",
    "停止",
    "退还",
    "返还",
    "补偿",
    "违约金",
];

/// Whether the object is a right, duty, liability or result (what a condition is not).
fn is_consequence(relation: &str) -> bool {
    matches!(
        relation,
        "主体-权利" | "主体-义务" | "主体-责任" | "条件-结果"
    )
}

fn term(s: &str) -> String {
    coal_corpus::short_name(
        s.trim()
            .trim_matches(|c| matches!(c, '《' | '》' | '"' | '“' | '”')),
    )
}

/// `第…条` (an article number, maybe with 款/项 after it).
fn is_article_number(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('第') else {
        return false;
    };
    let digits = rest
        .chars()
        .take_while(|c| "零一二三四五六七八九十百千0123456789".contains(*c))
        .count();
    digits > 0 && rest.chars().nth(digits) == Some('条')
}

/// Checks `t` against the text of the article it came from; `statute` is the law's title.
pub fn check(t: &Triple, article: &str, statute: &str) -> Result<(), Ungrounded> {
    let (subject, object, statute) = (term(&t.subject), term(&t.object), term(statute));
    let (subject, object, statute) = (subject.as_str(), object.as_str(), statute.as_str());
    let is_statute =
        |s: &str| s == "本法" || s == statute || (s.ends_with('法') && statute.contains(s));
    let cites = matches!(t.relation.as_str(), "引用" | "依据");
    if subject == object {
        return Err(Ungrounded::SameTerms);
    }
    if is_article_number(object) && !cites {
        return Err(Ungrounded::ArticleNumberObject);
    }
    if is_statute(object) && !cites {
        return Err(Ungrounded::StatuteObject);
    }
    if cites && !NORMS.iter().any(|n| object.contains(n)) {
        return Err(Ungrounded::NoNorm);
    }
    if t.relation == "定义" && is_statute(subject) {
        return Err(Ungrounded::StatuteDefined);
    }
    let Some(clause) = object_clause(article, object) else {
        return Err(Ungrounded::ObjectNotInArticle);
    };
    if t.relation == "规定" {
        return provision(is_statute(subject), object, article);
    }
    let of_a_party = matches!(
        t.relation.as_str(),
        "主体-权利" | "主体-义务" | "主体-责任" | "程序-步骤"
    );
    if of_a_party && is_statute(subject) {
        return Err(Ungrounded::StatuteAsParty);
    }
    if !is_statute(subject) && !article.contains(subject) {
        return Err(Ungrounded::SubjectNotInArticle);
    }
    let cue = cues(&t.relation);
    if !cue.is_empty() && !cue.iter().any(|w| clause.contains(w)) {
        return Err(Ungrounded::NoCue);
    }
    conventions(&t.relation, subject, object, clause)?;
    match t.relation.as_str() {
        "主体-权利" | "主体-义务" => {
            right_or_duty(&t.relation, subject, object, clause, article)
        }
        "主体-责任" => liability(subject, object, article),
        _ => Ok(()),
    }
}

/// 规定: the statute provides a whole provision, not its basis, a condition, one item of
/// its list or its enactment formula.
fn provision(by_statute: bool, object: &str, article: &str) -> Result<(), Ungrounded> {
    if !by_statute {
        return Err(Ungrounded::ProvidesWithoutStatute);
    }
    if ["根据", "依据", "依照"]
        .iter()
        .any(|w| object.starts_with(w))
    {
        return Err(Ungrounded::BasisAsProvision);
    }
    let bare_condition = ["如果", "假如", "倘若"]
        .iter()
        .any(|w| object.starts_with(w))
        && !object.contains(['，', ',']);
    if object.ends_with('的') || bare_condition || in_condition(article, object) {
        return Err(Ungrounded::ConditionAsObject);
    }
    if addressed_party(article, object) {
        return Err(Ungrounded::ActorAsProvision);
    }
    if is_list_item(object) || on_item_line(article, object) {
        return Err(Ungrounded::ItemAsProvision);
    }
    if first_after(article, object, PROVISION_PREPOSITIONS) {
        return Err(Ungrounded::ObjectOfPreposition);
    }
    if enumerated(article, object) {
        return Err(Ungrounded::MemberAsProvision);
    }
    if object.ends_with("制定本法") {
        return Err(Ungrounded::EnactmentFormula);
    }
    Ok(())
}

/// Whether the first place `object` stands verbatim in `article` is on a line that opens
/// with a list item's number (（一）按照章程自主管理 → 自主管理).
fn on_item_line(article: &str, object: &str) -> bool {
    article.find(object).is_some_and(|at| {
        let line_start = article[..at].rfind('\n').map_or(0, |i| i + 1);
        is_list_item(article[line_start..].trim_start())
    })
}

/// Whether `s` opens with a list item's number: （一）, (二).
fn is_list_item(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['（', '(']) else {
        return false;
    };
    let digits = rest
        .chars()
        .take_while(|c| "一二三四五六七八九十0123456789".contains(*c))
        .count();
    digits > 0 && matches!(rest.chars().nth(digits), Some('）' | ')'))
}

/// Whose right or duty the clause states, and whether the object is it.
fn right_or_duty(
    relation: &str,
    subject: &str,
    object: &str,
    clause: &str,
    article: &str,
) -> Result<(), Ungrounded> {
    if relation == "主体-义务" && EXEMPTIONS.iter().any(|e| object.starts_with(e)) {
        return Err(Ungrounded::ExemptionAsDuty);
    }
    if relation == "主体-义务" && !object.starts_with(['不', '禁']) && forbidden(article, object)
    {
        return Err(Ungrounded::NegationDropped);
    }
    // An object stated in several clauses (each party's contribution) is kept when one of
    // them gives it to the subject; a clause where no modal verb governs it gives it to
    // no one (…延长工作时间每日不得超过三小时).
    let mut givers = clauses(article)
        .filter(|c| c.contains(object))
        .chain(std::iter::once(clause))
        .filter_map(|c| gives_to_another(c, subject, object, cues(relation)))
        .peekable();
    if givers.peek().is_some() && givers.all(|another| another) {
        return Err(Ungrounded::AnotherActorInClause);
    }
    if !subject_acts(article, subject, object, clause) {
        return Err(Ungrounded::SubjectNotActor);
    }
    if first_after(article, object, PREPOSITIONS) {
        return Err(Ungrounded::ObjectOfPreposition);
    }
    if governed_by(article, object, GOVERNING_VERBS) {
        return Err(Ungrounded::GovernedByDroppedVerb);
    }
    Ok(())
}

/// Whose liability the article states.
fn liability(subject: &str, object: &str, article: &str) -> Result<(), Ungrounded> {
    // Statutes name who imposes a sanction with 由 and a sanctioning verb (由有关行政部门
    // 处…罚款, 由公安机关对责任人员处以…拘留) or ask it to with 提请: that actor acts, the
    // liability is someone else's. The whole article is read: the imposer's sentence often
    // comes before the 款 whose liability the triple names. 由X承担赔偿责任 names the
    // liable party and is kept.
    let imposes = article
        .match_indices(&format!("由{subject}"))
        .any(|(at, by)| {
            let rest = &article[at + by.len()..];
            let segment = &rest[..rest.find(['，', '；', '。', '\n']).unwrap_or(rest.len())];
            IMPOSING_VERBS.iter().any(|v| segment.contains(v))
        })
        || article.contains(&format!("提请{subject}"));
    if imposes {
        return Err(Ungrounded::SanctionImposer);
    }
    if harmed_only(article, subject) {
        return Err(Ungrounded::SubjectHarmed);
    }
    if first_after(article, object, PREPOSITIONS) {
        return Err(Ungrounded::ObjectOfPreposition);
    }
    Ok(())
}

/// The drafting conventions (see the module comment), after the cue word was found.
fn conventions(
    relation: &str,
    subject: &str,
    object: &str,
    clause: &str,
) -> Result<(), Ungrounded> {
    if is_consequence(relation) && object.ends_with('的') {
        return Err(Ungrounded::ConditionAsObject);
    }
    // A condition clause (构成犯罪的) or the conduct it names (违反治安管理行为) is no party.
    if matches!(relation, "主体-权利" | "主体-义务" | "主体-责任")
        && (subject.ends_with('的') || subject.ends_with("行为"))
    {
        return Err(Ungrounded::ConditionAsSubject);
    }
    // 可以依法要求…承担责任 is a right to demand; 民事责任 alone is no right.
    let governed = MODALS
        .iter()
        .chain(GOVERNING_VERBS)
        .any(|w| object.contains(w));
    if relation == "主体-权利" && object.ends_with("责任") && !governed {
        return Err(Ungrounded::LiabilityAsRight);
    }
    if relation == "主体-权利"
        && ["保障", "保护", "维护"]
            .iter()
            .any(|v| object.starts_with(v))
        && ["权利", "权益"].iter().any(|r| object.ends_with(r))
    {
        return Err(Ungrounded::GuaranteeAsRight);
    }
    let right_or_duty = matches!(relation, "主体-权利" | "主体-义务");
    if right_or_duty {
        if object.chars().count() <= 2 {
            return Err(Ungrounded::BareObject);
        }
        if cue_before_object(clause, object, cues(relation)) == Some(false) {
            return Err(Ungrounded::CueAfterObject);
        }
        if actor_in_object(object).is_some_and(|a| another_party(a, subject)) {
            return Err(Ungrounded::ObjectOfAnotherActor);
        }
    }
    // 责任人员 are the persons responsible, not a liability.
    let sanction_words = object.replace("责任人", "");
    let names_sanction = cues(relation)
        .iter()
        .chain(FURTHER_SANCTIONS)
        .any(|w| sanction_words.contains(w));
    if relation == "主体-责任" && !names_sanction {
        return Err(Ungrounded::NoSanction);
    }
    if relation == "条件-结果" && !(subject.ends_with('的') || subject.ends_with('时')) {
        return Err(Ungrounded::SubjectNotCondition);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
