"""SPARQL 1.1 Protocol checks of a live `coal serve` with clients nobody here wrote:
SPARQLWrapper (SELECT, ASK, CONSTRUCT; JSON, XML, CSV, TSV results) and rdflib's
SPARQLStore (the same SELECT through rdflib's own protocol client).

Usage: python3 sparqlwrapper_client.py http://127.0.0.1:PORT
Prints one line per check and exits non-zero at the first failure.
"""
import csv
import io
import sys

import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, TSV, XML, SPARQLWrapper, TURTLE

COAL = "https://w3id.org/coal/ontology#"
COUNT = "PREFIX coal: <%s> SELECT (COUNT(?a) AS ?n) WHERE { ?a a coal:Article }" % COAL


def endpoint(base, fmt, query, method="GET"):
    s = SPARQLWrapper(base + "/query")
    s.setMethod(method)
    s.setReturnFormat(fmt)
    s.setQuery(query)
    return s.query()


def main(base):
    n = int(endpoint(base, JSON, COUNT).convert()["results"]["bindings"][0]["n"]["value"])
    assert n > 0, n
    print("select json:", n)
    post = endpoint(base, JSON, COUNT, method="POST").convert()
    assert int(post["results"]["bindings"][0]["n"]["value"]) == n
    print("select json over POST:", n)
    xml = endpoint(base, XML, COUNT).convert()  # a minidom Document
    values = [t.firstChild.data for t in xml.getElementsByTagName("literal")]
    assert values == [str(n)], values
    print("select xml:", values)
    rows = list(csv.reader(io.StringIO(endpoint(base, CSV, COUNT).convert().decode())))
    assert rows == [["n"], [str(n)]], rows
    print("select csv:", rows)
    tsv = endpoint(base, TSV, COUNT).convert().decode().split("\n")
    assert tsv[0] == "?n" and tsv[1].startswith(str(n)), tsv
    print("select tsv:", tsv[:2])
    ask = endpoint(base, JSON, "PREFIX coal: <%s> ASK { ?a a coal:Article }" % COAL).convert()
    assert ask["boolean"] is True, ask
    print("ask:", ask["boolean"])
    construct = (
        "PREFIX coal: <%s> CONSTRUCT { ?v coal:title ?t } WHERE { ?v a coal:LawVersion ; coal:title ?t }"
        % COAL
    )
    g = endpoint(base, TURTLE, construct).convert()
    if isinstance(g, bytes):
        g = rdflib.Graph().parse(data=g.decode(), format="turtle")
    titles = {str(o) for o in g.objects(None, rdflib.URIRef(COAL + "title"))}
    assert titles and all(isinstance(t, str) for t in titles), titles
    print("construct turtle:", len(g), "triples", sorted(titles))
    store = SPARQLStore(query_endpoint=base + "/query", returnFormat="json")
    result = list(store.query(COUNT))
    assert int(result[0][0]) == n, result
    print("rdflib SPARQLStore:", int(result[0][0]))


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"))
