//! IRIs of the ontology's terms. Checked against `coal.ttl` by a test.

macro_rules! terms {
    ($($name:ident = $local:literal),* $(,)?) => {
        $(pub const $name: &str = concat!("https://w3id.org/coal/ontology#", $local);)*
        /// Every term declared in `coal.ttl`.
        pub const ALL: &[&str] = &[$($name),*];
    };
}

terms! {
    LAW_WORK = "LawWork",
    LAW_VERSION = "LawVersion",
    PROVISION = "Provision",
    PREAMBLE = "Preamble",
    PART = "Part",
    SUB_PART = "SubPart",
    CHAPTER = "Chapter",
    SECTION = "Section",
    APPENDIX = "Appendix",
    DIVISION = "Division",
    ARTICLE = "Article",
    PARAGRAPH = "Paragraph",
    ITEM = "Item",
    ARTICLE_WORK = "ArticleWork",
    CONCEPT = "Concept",
    DOMAIN = "Domain",
    REFERENCE = "Reference",
    OVERRIDE_CLAUSE = "OverrideClause",
    VERSION_DIFF = "VersionDiff",
    ARTICLE_CHANGE = "ArticleChange",
    EXTRACTED_TRIPLE = "ExtractedTriple",
    ENTITY = "Entity",
    FUSION_DECISION = "FusionDecision",
    BUILD = "Build",
    CONTAINS = "contains",
    CONTAINED_IN = "containedIn",
    HAS_VERSION = "hasVersion",
    VERSION_OF = "versionOf",
    REALIZES_ARTICLE = "realizesArticle",
    IN_LAW = "inLaw",
    SUPERSEDES = "supersedes",
    CITES = "cites",
    CONFLICTS_WITH = "conflictsWith",
    DEFINES = "defines",
    MENTIONS = "mentions",
    IN_DOMAIN = "inDomain",
    REFERS_TO = "refersTo",
    FROM_PROVISION = "fromProvision",
    DEFERS_TO = "defersTo",
    OVERRIDES = "overrides",
    FROM_VERSION = "fromVersion",
    TO_VERSION = "toVersion",
    IN_DIFF = "inDiff",
    FROM_ARTICLE = "fromArticle",
    TO_ARTICLE = "toArticle",
    TITLE = "title",
    SHORT_NAME = "shortName",
    LABEL = "label",
    HEADING = "heading",
    NUMBER = "number",
    SUFFIX = "suffix",
    ORDER = "order",
    TEXT = "text",
    HIERARCHY_PATH = "hierarchyPath",
    VERSION_DATE = "versionDate",
    VALID_FROM = "validFrom",
    VALID_UNTIL = "validUntil",
    HISTORY_NOTE = "historyNote",
    SOURCE_FILE = "sourceFile",
    SOURCE_LINE = "sourceLine",
    CONTENT_HASH = "contentHash",
    BUILD_ID = "buildId",
    CREATED_AT = "createdAt",
    RAW_TEXT = "rawText",
    SPAN_START = "spanStart",
    SPAN_END = "spanEnd",
    RESOLVED = "resolved",
    UNRESOLVED_REASON = "unresolvedReason",
    DEFINITION_TEXT = "definitionText",
    DEFINITION_KIND = "definitionKind",
    CLAUSE_KIND = "clauseKind",
    SUBJECT_TEXT = "subjectText",
    CHANGE_KIND = "changeKind",
    TRIPLE_SUBJECT = "tripleSubject",
    TRIPLE_RELATION = "tripleRelation",
    TRIPLE_OBJECT = "tripleObject",
    EXTRACTED_BY = "extractedBy",
    SIMILARITY = "similarity",
    FUSED_INTO = "fusedInto",
    FUSION_MEMBER = "fusionMember",
    DECISION = "decision",
    EVIDENCE = "evidence",
    LABEL_SIMILARITY = "labelSimilarity",
    DEFINITION_SIMILARITY = "definitionSimilarity",
    DECIDED_BY = "decidedBy",
    SUMMARY = "summary",
}

pub const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
pub const XSD_BOOLEAN: &str = "http://www.w3.org/2001/XMLSchema#boolean";
pub const SKOS_BROADER: &str = "http://www.w3.org/2004/02/skos/core#broader";
pub const SKOS_ALT_LABEL: &str = "http://www.w3.org/2004/02/skos/core#altLabel";
pub const SKOS_PREF_LABEL: &str = "http://www.w3.org/2004/02/skos/core#prefLabel";
pub const XSD_DATE: &str = "http://www.w3.org/2001/XMLSchema#date";
pub const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
pub const XSD_DATE_TIME: &str = "http://www.w3.org/2001/XMLSchema#dateTime";
