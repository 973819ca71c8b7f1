//! Decomposition by an LLM (METHOD.md §3: "with an LLM endpoint configured, the LLM
//! decomposes"): sub-queries, entities, constraints and relations as JSON. The entities
//! are then linked to the graph by the same lexicon the rules use, so domains come from
//! the graph either way. Any failure leaves the decision to the rules (the caller's).

use std::collections::BTreeSet;

use coal_models::ChatModel;

use super::intrinsic::{Decomposition, Entity, EntityKind, Lexicon, MAX_QUESTION_CHARS};

pub const SYSTEM: &str = "你把一个法律问题拆解为结构化的分析要素。只输出 JSON，不要任何其他文字。\
     格式：{\"sub_queries\":[\"…\"],\"entities\":[\"…\"],\"constraints\":[\"…\"],\"relations\":[\"…\"]}。\
     sub_queries：问题中需要分别回答的子问题（一到四个）；entities：涉及的法律、法律概念或主体；\
     constraints：年龄、期限、金额、日期、次数、比例等限定条件；relations：条件、因果、转折、并列等逻辑关系。\
     没有的项输出空数组。";

/// The reply's shape for backends that take a grammar (the local one): the four lists
/// with at most 4 sub-queries, 6 entities, 3 constraints and 3 relations of at most 40
/// characters each. Unbounded, the 0.5B model repeated list items until `max_tokens` cut
/// a third of its replies (66 of 200 dev questions, ~25 s each).
pub const GRAMMAR: &str = include_str!("decomposition.gbnf");

/// Items kept per list, and characters per item: a reply past these is trimmed.
const MAX_ITEMS: usize = 12;
const MAX_ITEM_CHARS: usize = 200;

/// Asks `chat` to decompose `q`.
pub fn decompose(
    chat: &dyn ChatModel,
    q: &str,
    lexicon: &Lexicon,
) -> Result<Decomposition, String> {
    let q: String = q.chars().take(MAX_QUESTION_CHARS).collect();
    let reply = chat
        .complete_with_grammar(SYSTEM, &q, GRAMMAR)
        .map_err(|e| e.to_string())?;
    parse(&reply, &q, lexicon)
}

/// Validates a reply: an object with a non-empty `sub_queries` array of strings and
/// optional `entities`, `constraints`, `relations` arrays of strings.
pub fn parse(reply: &str, q: &str, lexicon: &Lexicon) -> Result<Decomposition, String> {
    let v: serde_json::Value = serde_json::from_str(coal_models::chat::json_text(reply))
        .map_err(|e| format!("not the expected JSON: {e}"))?;
    let list = |key: &str, required: bool| -> Result<Vec<String>, String> {
        match v.get(key) {
            None if !required => Ok(Vec::new()),
            None => Err(format!("no \"{key}\"")),
            Some(serde_json::Value::Array(items)) => Ok(items
                .iter()
                .filter_map(|i| i.as_str())
                .map(|s| s.trim().chars().take(MAX_ITEM_CHARS).collect::<String>())
                .filter(|s| !s.is_empty())
                .take(MAX_ITEMS)
                .collect()),
            Some(_) => Err(format!("\"{key}\" is not an array")),
        }
    };
    let sub_queries = list("sub_queries", true)?;
    if sub_queries.is_empty() {
        return Err("no sub-query".into());
    }
    let named = list("entities", false)?;
    // Linked through the lexicon: what the question itself names, then the LLM's names;
    // a name the graph does not know is kept as such.
    let mut entities: Vec<Entity> = lexicon.find(q);
    for name in named {
        let linked = lexicon.find(&name);
        if linked.is_empty() {
            if !entities.iter().any(|e| e.name == name) {
                entities.push(Entity {
                    name,
                    kind: EntityKind::Unlinked,
                    law: String::new(),
                    domain: String::new(),
                });
            }
            continue;
        }
        for e in linked {
            if !entities.iter().any(|x| x.name == e.name) {
                entities.push(e);
            }
        }
    }
    let domains: BTreeSet<String> = entities
        .iter()
        .filter(|e| !e.domain.is_empty())
        .map(|e| e.domain.clone())
        .collect();
    Ok(Decomposition {
        sub_queries,
        entities,
        constraints: list("constraints", false)?,
        domains: domains.into_iter().collect(),
        relations: list("relations", false)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        let mut l = Lexicon::default();
        l.add("劳动合同法", EntityKind::Law, "劳动合同法", "社会法");
        l.add("经济补偿", EntityKind::Concept, "劳动合同法", "社会法");
        l.add("民法典", EntityKind::Law, "民法典", "民法典");
        l
    }

    #[test]
    fn a_reply_becomes_a_decomposition_linked_to_the_graph() {
        let q = "公司违法解除劳动合同，要付经济补偿还是赔偿金？";
        let reply = "```json\n{\"sub_queries\":[\"违法解除劳动合同的后果\",\"经济补偿与赔偿金的区别\"],\
            \"entities\":[\"劳动合同法\",\"赔偿金\",\"民法典\"],\"constraints\":[],\"relations\":[\"选择\"]}\n```";
        let d = parse(reply, q, &lexicon()).unwrap();
        assert_eq!(d.sub_queries.len(), 2);
        let names: Vec<&str> = d.entities.iter().map(|e| e.name.as_str()).collect();
        // 经济补偿 from the question; 劳动合同法 and 民法典 linked from the reply; 赔偿金 kept unlinked.
        assert_eq!(names, ["经济补偿", "劳动合同法", "赔偿金", "民法典"]);
        assert_eq!(d.entities[2].kind, EntityKind::Unlinked);
        assert_eq!(d.domains, ["民法典", "社会法"]);
        assert_eq!(d.relations, ["选择"]);
    }

    #[test]
    fn bad_replies_are_refused_with_a_reason() {
        let l = lexicon();
        for (reply, why) in [
            ("好的，我来拆解", "not the expected JSON"),
            ("{\"entities\":[]}", "no \"sub_queries\""),
            ("{\"sub_queries\":[]}", "no sub-query"),
            ("{\"sub_queries\":\"一个\"}", "not an array"),
        ] {
            let e = parse(reply, "问题", &l).unwrap_err();
            assert!(e.contains(why), "{reply}: {e}");
        }
    }
}
