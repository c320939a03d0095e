/* jsonschema.h — a small JSON Schema (draft 2020-12) validator, enough for
 * results/schema-1.json, so tests (and tools) can check reports without python.
 *
 * Supported keywords: type (a name or an array of names; "integer" is a number
 * with no fractional part), enum, const, properties, required,
 * additionalProperties (false or a schema), items (a schema), minItems, maxItems,
 * minimum, minLength, maxLength (code points), anyOf, and $ref to a JSON pointer
 * in the same document ("#/$defs/name"), alongside other keywords as 2020-12
 * allows.  $schema, $id, $defs, $comment, title and description are annotations.
 * Any other keyword is reported as unsupported rather than silently ignored, so a
 * schema can never claim a check this validator does not make. */
#ifndef GDN_JSONSCHEMA_H
#define GDN_JSONSCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Validates instance against schema (whose root resolves $refs).  Returns the
 * number of violations, 0 when valid; err gets the first one as
 * "$.path.to[3].value: message" (with " (and N more)" when there are more).
 * Returns -1 when the schema itself is unusable (unsupported keyword, dangling
 * $ref, a keyword of the wrong type); err then names the place in the schema. */
int json_schema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen);

/* Reads and parses a JSON file; NULL with a one-line message naming the file. */
cJSON *json_read_file(const char *path, char *err, size_t errlen);

#endif
