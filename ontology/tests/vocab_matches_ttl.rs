//! The Rust constants and `coal.ttl` must name the same terms.

use std::collections::BTreeSet;

use coal_ontology::{ONTOLOGY_TTL, ns, vocab};
use oxigraph::io::RdfFormat;
use oxigraph::model::{NamedNodeRef, Term};
use oxigraph::store::Store;

fn declared_terms() -> BTreeSet<String> {
    let store = Store::new().unwrap();
    store
        .load_from_reader(RdfFormat::Turtle, ONTOLOGY_TTL.as_bytes())
        .unwrap();
    let rdf_type = NamedNodeRef::new(vocab::RDF_TYPE).unwrap();
    let kinds: Vec<String> = ["Class", "ObjectProperty", "DatatypeProperty"]
        .iter()
        .map(|k| format!("{}{k}", ns::OWL))
        .collect();
    let mut out = BTreeSet::new();
    for q in store.quads_for_pattern(None, Some(rdf_type), None, None) {
        let q = q.unwrap();
        let Term::NamedNode(kind) = &q.object else {
            continue;
        };
        if kinds.iter().any(|k| k == kind.as_str())
            && let oxigraph::model::NamedOrBlankNode::NamedNode(s) = &q.subject
            && s.as_str().starts_with(ns::COAL)
        {
            out.insert(s.as_str().to_owned());
        }
    }
    out
}

#[test]
fn every_constant_is_declared_in_the_ttl_and_vice_versa() {
    let declared = declared_terms();
    let constants: BTreeSet<String> = vocab::ALL.iter().map(|s| s.to_string()).collect();
    let missing_in_ttl: Vec<_> = constants.difference(&declared).collect();
    let missing_in_rust: Vec<_> = declared.difference(&constants).collect();
    assert!(
        missing_in_ttl.is_empty(),
        "constants not declared in coal.ttl: {missing_in_ttl:?}"
    );
    assert!(
        missing_in_rust.is_empty(),
        "terms of coal.ttl without a constant: {missing_in_rust:?}"
    );
    assert!(
        declared.len() >= 40,
        "only {} terms declared",
        declared.len()
    );
}

#[test]
fn ontology_aligns_with_eli_and_skos() {
    let store = Store::new().unwrap();
    store
        .load_from_reader(RdfFormat::Turtle, ONTOLOGY_TTL.as_bytes())
        .unwrap();
    let q = |s: &str, p: &str, o: &str| {
        store
            .contains(oxigraph::model::QuadRef::new(
                NamedNodeRef::new(s).unwrap(),
                NamedNodeRef::new(p).unwrap(),
                NamedNodeRef::new(o).unwrap(),
                oxigraph::model::GraphNameRef::DefaultGraph,
            ))
            .unwrap()
    };
    let sub_class = format!("{}subClassOf", ns::RDFS);
    let sub_prop = format!("{}subPropertyOf", ns::RDFS);
    assert!(q(
        vocab::LAW_WORK,
        &sub_class,
        &format!("{}LegalResource", ns::ELI)
    ));
    assert!(q(
        vocab::LAW_VERSION,
        &sub_class,
        &format!("{}LegalExpression", ns::ELI)
    ));
    assert!(q(
        vocab::CONTAINS,
        &sub_prop,
        &format!("{}has_part", ns::ELI)
    ));
    assert!(q(
        vocab::CONTAINED_IN,
        &sub_prop,
        &format!("{}is_part_of", ns::ELI)
    ));
    assert!(q(vocab::CITES, &sub_prop, &format!("{}cites", ns::ELI)));
    assert!(q(
        vocab::VERSION_DATE,
        &sub_prop,
        &format!("{}version_date", ns::ELI)
    ));
    assert!(q(
        vocab::LABEL,
        &sub_prop,
        &format!("{}prefLabel", ns::SKOS)
    ));
    assert!(q(
        vocab::CONCEPT,
        &sub_class,
        &format!("{}Concept", ns::SKOS)
    ));
}
