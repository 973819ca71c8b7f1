//! The CoAL ontology: `coal.ttl`, the Rust constants for its terms, and the IRI scheme
//! for laws, versions and provisions.
//!
//! Architecture invariant: this crate depends on nothing of ours and on no RDF library;
//! it hands out strings. A test parses `coal.ttl` and checks that [`vocab::ALL`] names
//! exactly the terms the file declares, so the two cannot drift.

pub mod iri;
pub mod vocab;

/// The ontology in Turtle, loaded into the store's ontology graph.
pub const ONTOLOGY_TTL: &str = include_str!("../coal.ttl");

/// The ontology's own IRI (also the named graph that holds it).
pub const ONTOLOGY_IRI: &str = "https://w3id.org/coal/ontology";

/// Well-known namespaces.
pub mod ns {
    pub const COAL: &str = "https://w3id.org/coal/ontology#";
    pub const ELI: &str = "http://data.europa.eu/eli/ontology#";
    pub const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
    pub const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
    pub const SKOS: &str = "http://www.w3.org/2004/02/skos/core#";
    pub const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
    pub const OWL: &str = "http://www.w3.org/2002/07/owl#";

    /// The prefixes every query may use undeclared (`coal sparql`, `/query`, a remote
    /// endpoint) and that results are shortened with.
    pub const PREFIXES: [(&str, &str); 7] = [
        ("coal", COAL),
        ("eli", ELI),
        ("rdf", RDF),
        ("rdfs", RDFS),
        ("skos", SKOS),
        ("xsd", XSD),
        ("owl", OWL),
    ];
}
