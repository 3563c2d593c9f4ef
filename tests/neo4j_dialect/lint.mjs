// Reads a JSON array of {query, parameters} on stdin; prints, for each, the errors Neo4j's
// Cypher parser and semantic analysis (@neo4j-cypher/language-support) find in it.
import { lintCypherQuery } from '@neo4j-cypher/language-support';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const items = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const results = items.map(({ query, parameters }) => {
  const { diagnostics } = lintCypherQuery(query, { parameters: parameters ?? {} });
  // severity 1 is an error; warnings (2) such as unknown labels are expected without a schema
  return diagnostics.filter((d) => d.severity === 1).map((d) => d.message);
});
process.stdout.write(JSON.stringify(results));
