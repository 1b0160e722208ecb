# Turn a text file into a C file defining `const char NAME[]` with its content (cmake -P).
# Used for the report page's script (stress/report_page.js), kept as JavaScript in the tree.
# Inputs: IN (the file), OUT (the C file written), NAME (the array's name).
file(READ "${IN}" text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
# "?" escaped: C11 (without GNU extensions) reads trigraphs such as "??)".
string(REPLACE "?" "\\?" text "${text}")
string(REPLACE "\n" "\\n\"\n\"" text "${text}")
file(WRITE "${OUT}" "/* Generated from ${IN} by scripts/embed_text.cmake; do not edit. */\n"
     "#include <stddef.h>\nconst char ${NAME}[] =\n\"${text}\";\n"
     "const size_t ${NAME}_len = sizeof ${NAME} - 1;\n")
