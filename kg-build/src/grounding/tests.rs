use super::*;

fn t(s: &str, r: &str, o: &str) -> Triple {
    Triple {
        subject: s.into(),
        relation: r.into(),
        object: o.into(),
    }
}

const ART: &str = "用人单位招用劳动者时，应当如实告知劳动者工作内容；用人单位有权了解劳动者与劳动合同直接相关的基本情况。";
const LAW: &str = "中华人民共和国劳动合同法";

#[test]
fn a_triple_the_article_states_is_kept() {
    assert_eq!(
        check(
            &t("用人单位", "主体-义务", "如实告知劳动者工作内容"),
            ART,
            LAW
        ),
        Ok(())
    );
    assert_eq!(
        check(&t("本法", "规定", "用人单位有权了解劳动者"), ART, LAW),
        Ok(())
    );
}

#[test]
fn drafting_conventions_refuse_what_the_clause_does_not_give_the_subject() {
    const ART2: &str = "根据宪法，制定本法。职工二百人以上的企业的工会，可以设专职工会主席；有关单位应当予以协助。违反本法规定的，由有关部门责令改正；情节严重的，对直接负责的主管人员依法给予处分。";
    let kept = [
        t("工会", "主体-权利", "设专职工会主席"),
        t("违反本法规定的", "条件-结果", "由有关部门责令改正"),
        t("有关单位", "主体-义务", "有关单位应当予以协助"),
    ];
    for triple in kept {
        assert_eq!(check(&triple, ART2, LAW), Ok(()), "{triple:?}");
    }
    let cases = [
        (
            t("工会", "主体-权利", "职工二百人以上的企业"),
            Ungrounded::CueAfterObject,
        ),
        (
            t("工会", "主体-义务", "有关单位应当予以协助"),
            Ungrounded::ObjectOfAnotherActor,
        ),
        (t("工会", "主体-权利", "设"), Ungrounded::BareObject),
        (
            t("有关部门", "主体-责任", "情节严重的"),
            Ungrounded::ConditionAsObject,
        ),
        (
            t("有关部门", "主体-责任", "直接负责的主管人员"),
            Ungrounded::NoSanction,
        ),
        (
            t("有关部门", "条件-结果", "责令改正"),
            Ungrounded::SubjectNotCondition,
        ),
        (t("本法", "规定", "根据宪法"), Ungrounded::BasisAsProvision),
        (
            t("有关部门", "主体-责任", "责令改正"),
            Ungrounded::SanctionImposer,
        ),
    ];
    refused(ART2, cases);
    // 由 naming the liable party is no imposer.
    const LIABLE: &str = "货物在运输中毁损的，由铁路运输企业承担赔偿责任。";
    let liable = t("铁路运输企业", "主体-责任", "承担赔偿责任");
    assert_eq!(check(&liable, LIABLE, LAW), Ok(()));
}

/// The rules written on the third and fourth samples' wrong triples, each on the
/// statute text it came from (社会保险法, 劳动合同法, 残疾人保障法), with the right
/// triple of the same clause kept.
#[test]
fn a_clause_gives_its_right_or_duty_to_its_own_actor() {
    const PENSION: &str = "职工应当参加基本养老保险，由用人单位和职工共同缴纳基本养老保险费。\n公务员和参照公务员法管理的工作人员养老保险的办法由国务院规定。";
    const DISMISSAL: &str = "劳动者有下列情形之一的，用人单位可以解除劳动合同：\n（一）在试用期间被证明不符合录用条件的；";
    const WAGES: &str = "用人单位拖欠或者未足额支付劳动报酬的，劳动者可以依法向当地人民法院申请支付令，人民法院应当依法发出支付令。";
    kept_on([
        (PENSION, t("用人单位", "主体-义务", "缴纳基本养老保险费")),
        (PENSION, t("职工", "主体-义务", "参加基本养老保险")),
        (DISMISSAL, t("用人单位", "主体-权利", "解除劳动合同")),
        (WAGES, t("劳动者", "主体-权利", "申请支付令")),
    ]);
    refused_on([
        (
            PENSION,
            t("公务员", "主体-义务", "参加基本养老保险"),
            Ungrounded::AnotherActorInClause,
        ),
        (
            DISMISSAL,
            t("劳动者", "主体-权利", "解除劳动合同"),
            Ungrounded::AnotherActorInClause,
        ),
        // The court is addressed by the worker's right; its own clause is a duty.
        (
            WAGES,
            t("人民法院", "主体-权利", "支付令"),
            Ungrounded::AnotherActorInClause,
        ),
    ]);
}

#[test]
fn negations_conditions_guarantees_definitions_and_norms_are_read_as_statutes_use_them() {
    const INSPECTION: &str = "社会保险行政部门实施监督检查时，被检查的用人单位和个人应当如实提供与社会保险有关的资料，不得拒绝检查或者谎报、瞒报。";
    const CRIME: &str = "违反本法规定，侵害残疾人的合法权益，造成财产损失或者其他损害的，依法承担民事责任；构成犯罪的，依法追究刑事责任。";
    const GUARANTEE: &str = "国家保障残疾人劳动的权利。\n各级人民政府应当对残疾人劳动就业统筹规划，为残疾人创造劳动就业条件。";
    const DEFINITION: &str = "残疾人是指在心理、生理、人体结构上，某种组织、功能丧失或者不正常，全部或者部分丧失以正常方式从事某种活动能力的人。";
    const BUDGET: &str = "社会保险基金预算、决算草案的编制、审核和批准，依照法律和国务院规定执行。";
    kept_on([
        (
            INSPECTION,
            t(
                "被检查的用人单位和个人",
                "主体-义务",
                "如实提供与社会保险有关的资料",
            ),
        ),
        (
            GUARANTEE,
            t("各级人民政府", "主体-义务", "为残疾人创造劳动就业条件"),
        ),
        (BUDGET, t("社会保险基金预算", "依据", "国务院规定")),
    ]);
    refused_on([
        (
            INSPECTION,
            t(
                "被检查的用人单位和个人",
                "主体-义务",
                "拒绝检查或者谎报、瞒报",
            ),
            Ungrounded::NegationDropped,
        ),
        (
            CRIME,
            t("构成犯罪的", "主体-责任", "依法追究刑事责任"),
            Ungrounded::ConditionAsSubject,
        ),
        (
            GUARANTEE,
            t("国家", "主体-权利", "保障残疾人劳动的权利"),
            Ungrounded::GuaranteeAsRight,
        ),
        (
            DEFINITION,
            t("本法", "定义", "残疾人"),
            Ungrounded::StatuteDefined,
        ),
        (
            BUDGET,
            t("社会保险基金预算", "依据", "国务院"),
            Ungrounded::NoNorm,
        ),
    ]);
}

/// The rules written on the fifth sample's wrong triples (劳动法), each on the article it
/// came from, with the right triple of the same article kept.
#[test]
fn prepositions_dropped_verbs_consent_and_harm_are_read_as_statutes_use_them() {
    const RULES: &str =
        "用人单位应当依法建立和完善规章制度，保障劳动者享有劳动权利和履行劳动义务。";
    const SECRETS: &str = "劳动合同当事人可以在劳动合同中约定保守用人单位商业秘密的有关事项。";
    const OVERTIME: &str = "用人单位由于生产经营需要，经与工会和劳动者协商后可以延长工作时间，一般每日不得超过一小时；因特殊原因需要延长工作时间的，在保障劳动者身体健康的条件下延长工作时间每日不得超过三小时。";
    const LIMIT: &str = "用人单位不得违反本法规定延长劳动者的工作时间。";
    const AWARD: &str = "劳动争议当事人对仲裁裁决不服的，可以自收到仲裁裁决书之日起十五日内向人民法院提起诉讼。一方当事人在法定期限内不起诉又不履行仲裁裁决的，另一方当事人可以申请人民法院强制执行。";
    const DETENTION: &str = "用人单位有下列行为之一，由公安机关对责任人员处以十五日以下拘留、罚款或者警告；构成犯罪的，对责任人员依法追究刑事责任：";
    const SUSPENSION: &str = "由劳动行政部门或者有关部门责令改正，可以处以罚款；情节严重的，提请县级以上人民政府决定责令停产整顿；造成劳动者生命和财产损失的，对责任人员依照刑法有关规定追究刑事责任。";
    const POACHING: &str = "用人单位招用尚未解除劳动合同的劳动者，对原用人单位造成经济损失的，该用人单位应当依法承担连带赔偿责任。";
    const INVALID: &str = "下列劳动合同无效：\n（一）违反法律、行政法规的劳动合同；\n确认劳动合同部分无效的，如果不影响其余部分的效力，其余部分仍然有效。";
    const PURPOSE: &str = "为了保护劳动者的合法权益，调整劳动关系，根据宪法，制定本法。";
    const PREMIUMS: &str = "职工应当缴纳的社会保险费由用人单位代扣代缴，用人单位应当按月将缴纳社会保险费的明细情况告知本人。";
    kept_on([
        (RULES, t("用人单位", "主体-义务", "建立和完善规章制度")),
        (OVERTIME, t("用人单位", "主体-权利", "延长工作时间")),
        (
            LIMIT,
            t(
                "用人单位",
                "主体-义务",
                "不得违反本法规定延长劳动者的工作时间",
            ),
        ),
        (
            AWARD,
            t("另一方当事人", "主体-权利", "申请人民法院强制执行"),
        ),
        (DETENTION, t("责任人员", "主体-责任", "依法追究刑事责任")),
        (
            SUSPENSION,
            t("责任人员", "主体-责任", "依照刑法有关规定追究刑事责任"),
        ),
        (POACHING, t("用人单位", "主体-责任", "连带赔偿责任")),
        (INVALID, t("本法", "规定", "下列劳动合同无效")),
        (PURPOSE, t("本法", "规定", "调整劳动关系")),
        // The subject's own 应当 in front of the object's verb, though 用人单位 is the
        // actor where the object stands verbatim.
        (PREMIUMS, t("职工", "主体-义务", "缴纳社会保险费")),
    ]);
    refused_on([
        (
            RULES,
            t("用人单位", "主体-义务", "履行劳动义务"),
            Ungrounded::GovernedByDroppedVerb,
        ),
        (
            SECRETS,
            t("劳动合同当事人", "主体-权利", "保守用人单位商业秘密"),
            Ungrounded::GovernedByDroppedVerb,
        ),
        (
            OVERTIME,
            t("工会", "主体-权利", "延长工作时间"),
            Ungrounded::AnotherActorInClause,
        ),
        (
            LIMIT,
            t(
                "劳动者",
                "主体-义务",
                "不得违反本法规定延长劳动者的工作时间",
            ),
            Ungrounded::AnotherActorInClause,
        ),
        (
            AWARD,
            t("劳动争议当事人", "主体-权利", "仲裁裁决"),
            Ungrounded::ObjectOfPreposition,
        ),
        (
            AWARD,
            t("另一方当事人", "主体-权利", "强制执行"),
            Ungrounded::GovernedByDroppedVerb,
        ),
        (
            DETENTION,
            t("公安机关", "主体-责任", "罚款"),
            Ungrounded::SanctionImposer,
        ),
        (
            SUSPENSION,
            t("县级以上人民政府", "主体-责任", "决定责令停产整顿"),
            Ungrounded::SanctionImposer,
        ),
        (
            POACHING,
            t("原用人单位", "主体-责任", "连带赔偿责任"),
            Ungrounded::SubjectHarmed,
        ),
        (
            INVALID,
            t("本法", "规定", "（一）违反法律、行政法规的劳动合同"),
            Ungrounded::ItemAsProvision,
        ),
        (
            INVALID,
            t("本法", "规定", "如果不影响其余部分的效力"),
            Ungrounded::ConditionAsObject,
        ),
        (
            PURPOSE,
            t("本法", "规定", "制定本法"),
            Ungrounded::EnactmentFormula,
        ),
    ]);
}

#[test]
fn a_party_holds_a_right_or_duty_only_where_its_clause_names_it_as_the_one_who_acts() {
    const PROPERTY: &str = "老年人有依法继承父母、配偶、子女或者其他亲属遗产的权利，有接受赠与的权利。子女或者其他亲属不得侵占应当由老年人继承的财产。";
    const BEQUEST: &str = "负有扶养义务的组织或者个人按照遗赠扶养协议，承担该老年人生养死葬的义务，享有受遗赠的权利。";
    const OPINIONS: &str =
        "老年人和老年人组织有权向国家机关提出老年人权益保障、老龄事业发展等方面的意见和建议。";
    const CARE: &str = "养老机构及其工作人员不得以任何方式侵害老年人的权益。";
    const LABOUR: &str = "农村老年人不承担兴办公益事业的筹劳义务。";
    const CLUBS: &str = "老年人可以通过老年人组织，开展有益身心健康的活动。";
    const ABUSE: &str =
        "干涉老年人婚姻自由，虐待老年人或者对老年人实施家庭暴力的，由有关单位给予批评教育。";
    const AUTONOMY: &str =
        "民族自治地方的人民代表大会，可以根据本法的原则，制定变通的或者补充的规定。";
    const TRAINING: &str =
        "政府有关部门、残疾人所在单位和有关社会组织应当对残疾人开展扫除文盲、职业培训、创业培训。";
    const PREMIUMS: &str = "职工应当缴纳的社会保险费由用人单位代扣代缴。";
    kept_on([
        (PROPERTY, t("老年人", "主体-权利", "接受赠与的权利")),
        (
            BEQUEST,
            t(
                "负有扶养义务的组织或者个人",
                "主体-权利",
                "享有受遗赠的权利",
            ),
        ),
        (
            OPINIONS,
            t(
                "老年人组织",
                "主体-权利",
                "向国家机关提出老年人权益保障、老龄事业发展等方面的意见和建议",
            ),
        ),
        (TRAINING, t("残疾人所在单位", "主体-义务", "职业培训")),
        (TRAINING, t("有关社会组织", "主体-义务", "创业培训")),
        (PREMIUMS, t("用人单位", "主体-义务", "代扣代缴")),
        (CLUBS, t("老年人", "主体-权利", "开展有益身心健康的活动")),
        (
            AUTONOMY,
            t(
                "本法",
                "规定",
                "民族自治地方的人民代表大会，可以根据本法的原则，制定变通的或者补充的规定",
            ),
        ),
    ]);
    refused_on([
        (
            PROPERTY,
            t("子女或者其他亲属", "主体-权利", "接受赠与的权利"),
            Ungrounded::SubjectNotActor,
        ),
        (
            BEQUEST,
            t("老年人", "主体-权利", "享有受遗赠的权利"),
            Ungrounded::SubjectNotActor,
        ),
        (
            BEQUEST,
            t(
                "老年人",
                "主体-义务",
                "负有扶养义务的组织或者个人按照遗赠扶养协议，承担该老年人生养死葬的义务",
            ),
            Ungrounded::SubjectNotActor,
        ),
        (
            OPINIONS,
            t("国家机关", "主体-权利", "老年人和老年人组织的意见和建议"),
            Ungrounded::SubjectNotActor,
        ),
        (
            CARE,
            t("养老机构及其工作人员", "主体-义务", "侵害老年人的权益"),
            Ungrounded::NegationDropped,
        ),
        (
            LABOUR,
            t("农村老年人", "主体-义务", "不承担兴办公益事业的筹劳义务"),
            Ungrounded::ExemptionAsDuty,
        ),
        (
            CLUBS,
            t("老年人", "主体-权利", "老年人组织"),
            Ungrounded::ObjectOfPreposition,
        ),
        (
            ABUSE,
            t("本法", "规定", "干涉老年人婚姻自由"),
            Ungrounded::ConditionAsObject,
        ),
        (
            ABUSE,
            t("本法", "规定", "对老年人实施家庭暴力"),
            Ungrounded::ConditionAsObject,
        ),
        (
            AUTONOMY,
            t("本法", "规定", "民族自治地方的人民代表大会"),
            Ungrounded::ActorAsProvision,
        ),
    ]);
}

#[test]
fn list_items_enumerations_and_the_statute_as_a_party_are_no_provisions() {
    const RIGHTS: &str =
        "学校及其他教育机构行使下列权利：\n（一）按照章程自主管理；\n（二）组织实施教育教学活动；";
    const EDUCATION: &str = "国家在受教育者中进行爱国主义、集体主义、中国特色社会主义的教育，进行理想、道德、纪律、法治、国防和民族团结的教育。";
    const ROLE: &str =
        "教育是社会主义现代化建设的基础，对提高人民综合素质、促进人的全面发展具有决定性意义。";
    const POLICY: &str = "国家采取综合措施，调控人口数量，提高人口素质，推动实现适度生育水平。";
    const DUTY: &str = "违反本法规定，不履行协助计划生育管理义务的，由有关地方人民政府责令改正。";
    const CIVIL: &str = "学校及其他教育机构在民事活动中依法享有民事权利，承担民事责任。";
    const POLICE: &str = "拒绝、阻碍工作人员依法执行公务的，由卫生健康主管部门给予批评教育；构成违反治安管理行为的，依法给予治安管理处罚；构成犯罪的，依法追究刑事责任。";
    kept_on([
        (RIGHTS, t("本法", "规定", "学校及其他教育机构行使下列权利")),
        (POLICY, t("本法", "规定", "国家采取综合措施，调控人口数量")),
        (POLICY, t("本法", "规定", "提高人口素质")),
        (ROLE, t("本法", "规定", "教育是社会主义现代化建设的基础")),
        (CIVIL, t("学校及其他教育机构", "主体-权利", "民事权利")),
    ]);
    refused_on([
        (
            RIGHTS,
            t("本法", "规定", "自主管理"),
            Ungrounded::ItemAsProvision,
        ),
        (
            RIGHTS,
            t("本法", "规定", "组织实施教育教学活动"),
            Ungrounded::ItemAsProvision,
        ),
        (
            EDUCATION,
            t("本法", "规定", "纪律"),
            Ungrounded::MemberAsProvision,
        ),
        (
            EDUCATION,
            t("本法", "规定", "民族团结"),
            Ungrounded::MemberAsProvision,
        ),
        (
            EDUCATION,
            t("本法", "规定", "爱国主义"),
            Ungrounded::MemberAsProvision,
        ),
        (
            ROLE,
            t("本法", "规定", "提高人民综合素质"),
            Ungrounded::ObjectOfPreposition,
        ),
        (
            ROLE,
            t("本法", "规定", "促进人的全面发展"),
            Ungrounded::MemberAsProvision,
        ),
        (
            DUTY,
            t("本法", "主体-义务", "不履行协助计划生育管理义务"),
            Ungrounded::StatuteAsParty,
        ),
        (
            DUTY,
            t("本法", "程序-步骤", "责令改正"),
            Ungrounded::StatuteAsParty,
        ),
        (
            CIVIL,
            t("学校及其他教育机构", "主体-权利", "民事责任"),
            Ungrounded::LiabilityAsRight,
        ),
        (
            POLICE,
            t("违反治安管理行为", "主体-责任", "刑事责任"),
            Ungrounded::ConditionAsSubject,
        ),
    ]);
}

/// Each triple is refused for its reason on `article`.
fn refused<const N: usize>(article: &str, cases: [(Triple, Ungrounded); N]) {
    refused_on(cases.map(|(triple, why)| (article, triple, why)));
}

/// Each triple is kept on its own article.
fn kept_on<const N: usize>(cases: [(&str, Triple); N]) {
    for (article, triple) in cases {
        assert_eq!(check(&triple, article, LAW), Ok(()), "{triple:?}");
    }
}

/// Each triple is refused for its reason on its own article.
fn refused_on<const N: usize>(cases: [(&str, Triple, Ungrounded); N]) {
    for (article, triple, why) in cases {
        assert_eq!(check(&triple, article, LAW), Err(why), "{triple:?}");
    }
}

#[test]
fn each_check_refuses_what_the_article_does_not_say() {
    let cases = [
        (
            t("用人单位", "主体-权利", "用人单位"),
            Ungrounded::SameTerms,
        ),
        (
            t("劳动合同", "修改", "第十六条"),
            Ungrounded::ArticleNumberObject,
        ),
        (
            t("劳动者", "适用于", "《中华人民共和国劳动合同法》"),
            Ungrounded::StatuteObject,
        ),
        (
            t("劳动者", "主体-权利", "平等就业"),
            Ungrounded::ObjectNotInArticle,
        ),
        (
            t("工会", "主体-义务", "如实告知劳动者工作内容"),
            Ungrounded::SubjectNotInArticle,
        ),
        (
            t("用人单位", "规定", "如实告知劳动者工作内容"),
            Ungrounded::ProvidesWithoutStatute,
        ),
        // The object's clause says 应当 (a duty), not a right.
        (
            t("用人单位", "主体-权利", "如实告知劳动者工作内容"),
            Ungrounded::NoCue,
        ),
    ];
    refused(ART, cases);
    // An article number is a fine object of a citation.
    assert_eq!(
        check(&t("本法", "引用", "第十六条"), "依照本法第十六条规定", LAW),
        Ok(())
    );
}
