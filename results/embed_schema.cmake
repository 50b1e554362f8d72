# Turns the schema JSON into a C++ source file, so the binary validates files without the repository.
file(READ ${SCHEMA} content)
file(WRITE ${OUTPUT} "// Generated from ${SCHEMA}: do not edit.\nnamespace gpuscale {\nextern const char* const kResultSchemaV1;\nconst char* const kResultSchemaV1 = R\"gpuscale_schema(${content})gpuscale_schema\";\n}\n")
