/*
 * The one textual XML scanner, shared by the code that reads a request
 * before (or instead of) libyang: the edit-config fast path, the
 * custom-reply matcher (its name scan and text hash), the error path that
 * must repeat the <rpc> attributes when libyang cannot read the message,
 * and the reader of OpenDaylight's notification files. It knows start,
 * end and empty tags with quoted attributes, namespace declarations and a
 * scope of them, comments and processing instructions between elements,
 * text content with CDATA sections and entity or character references,
 * and ASCII names only: it gives up (-1) on anything else rather than
 * guess, and its callers then leave the message to libyang (or refuse
 * the file).
 */
#ifndef FLEET_XMLSCAN_H
#define FLEET_XMLSCAN_H

#include <stddef.h>

#include "sbuf.h"

/* Namespace declarations a scope holds; more make xmlscan_push_decls() give up. */
#define XMLSCAN_MAX_NS 16

/* One tag as written: pointers into the text. */
struct xmlscan_tag {
    const char *start;  /* its '<' */
    int end;            /* 1 for </name> */
    int empty;          /* 1 for <name/> */
    const char *prefix; /* element prefix or NULL */
    size_t prefix_len;  /* its length */
    const char *local;  /* local name */
    size_t local_len;   /* its length */
    const char *attrs;  /* attribute text, after the name */
    size_t attrs_len;   /* its length (without a closing '/') */
    const char *next;   /* first byte after the tag */
};

/* One attribute (or namespace declaration) of a tag. */
struct xmlscan_attr {
    const char *prefix; /* attribute prefix or NULL */
    size_t prefix_len;  /* its length */
    const char *local;  /* local name */
    size_t local_len;   /* its length */
    const char *value;  /* value as written, without quotes */
    size_t value_len;   /* its length */
};

/* A namespace declaration in scope. */
struct xmlscan_ns {
    const char *prefix; /* declared prefix, NULL for the default namespace */
    size_t prefix_len;  /* its length */
    const char *uri;    /* namespace, as written (no entities) */
    size_t uri_len;     /* its length */
};

/* The declarations in scope, innermost last; restore count to leave an element. */
struct xmlscan_scope {
    struct xmlscan_ns ns[XMLSCAN_MAX_NS]; /* declarations, pointers into the text */
    size_t count;                         /* entries used in ns */
};

/* XML whitespace (the S production): space, tab, carriage return, line feed. */
static inline int
xmlscan_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/** @brief Narrow the span [*s, *s + *len) to leave out XML whitespace at both ends. */
void xmlscan_trim(const char **s, size_t *len);

/*
 * Skips whitespace, comments and processing instructions (the XML
 * declaration among them) before or between tags.
 * @return The first other character, or NULL when a comment or instruction is not closed.
 */
const char *xmlscan_skip_misc(const char *p);

/**
 * @brief Read the tag starting at @p p (its '<'; NULL is refused).
 * @return 0, or -1 when it is not a start, end or empty tag with ASCII names and quoted attributes.
 */
int xmlscan_read_tag(const char *p, struct xmlscan_tag *t);

/**
 * @brief The next tag at or after @p p, skipping text, comments, CDATA and processing instructions.
 * @return 0, or -1 at the end of the text or on what xmlscan_read_tag() refuses.
 */
int xmlscan_next_tag(const char *p, struct xmlscan_tag *t);

/**
 * @brief The next attribute of a tag's attribute text.
 * @param[in,out] cursor Start at t->attrs; moved past the attribute.
 * @param[in] end t->attrs + t->attrs_len.
 * @return 1 when one was read, 0 at the end, -1 when the text is malformed.
 */
int xmlscan_next_attr(const char **cursor, const char *end, struct xmlscan_attr *a);

/** @brief Whether the tag carries any attribute or namespace declaration. */
int xmlscan_has_attrs(const struct xmlscan_tag *t);

/** @brief Whether the tag carries an attribute of the same qualified name as @p a before it. */
int xmlscan_attr_repeated(const struct xmlscan_tag *t, const struct xmlscan_attr *a);

/** @brief Whether the attribute is a namespace declaration (xmlns or xmlns:p). */
int xmlscan_is_xmlns(const struct xmlscan_attr *a);

/**
 * @brief A value that may be copied into another tag as written: printable ASCII without '&', '<' or '"'.
 */
int xmlscan_plain_value(const char *v, size_t len);

/** @brief Same qualified name (prefix and local name), e.g. for an end tag and its start tag. */
int xmlscan_same_qname(const struct xmlscan_tag *a, const struct xmlscan_tag *b);

/** @brief Whether the span equals the string. */
int xmlscan_eq(const char *s, size_t len, const char *want);

/**
 * @brief Add the tag's namespace declarations to the scope.
 * @return 0, or -1 for a repeated attribute, an empty or non-plain namespace, or a full scope.
 */
int xmlscan_push_decls(struct xmlscan_scope *scope, const struct xmlscan_tag *t);

/** @brief The declaration in scope for @p prefix (NULL: the default namespace), or NULL when unbound. */
const struct xmlscan_ns *xmlscan_resolve(const struct xmlscan_scope *scope, const char *prefix,
                                         size_t prefix_len);

/** @brief Whether the tag's element name is in namespace @p uri with local name @p local. */
int xmlscan_is_elem(const struct xmlscan_scope *scope, const struct xmlscan_tag *t, const char *uri,
                    const char *local);

/**
 * @brief The attributes of a start tag, printed for another tag (an <rpc-reply> repeating its <rpc>'s):
 * namespace declarations dropped, each prefix an attribute uses declared once from @p scope. Every
 * '>' is written as &gt;, so the output never holds the end-of-message marker "]]>]]>".
 * @param[in] strict 1: give up (-1) on a value that is not plain, an unbound prefix or a repeated
 *            attribute; 0: copy references as written, escape quotes, leave such attributes out.
 * @param[out] out Appended to.
 * @param[out] has_message_id Set to 1 when an unprefixed message-id was printed (may be NULL).
 * @return 0, or -1 (strict only, or malformed attribute text).
 */
int xmlscan_print_attrs(const struct xmlscan_scope *scope, const struct xmlscan_tag *t, int strict,
                        struct sbuf *out, int *has_message_id);

/**
 * @brief Decode the reference at @p p (its '&'): &lt; &gt; &amp; &quot; &apos;, or a character
 * reference (&#N; or &#xN;) to a Unicode scalar value other than 0, appended to @p out as UTF-8.
 * @return The byte after its ';', or NULL (nothing appended) when it is none of these.
 */
const char *xmlscan_read_ref(const char *p, struct sbuf *out);

/**
 * @brief The text content of an element that holds no elements, from @p p up to an end tag:
 * character data with its references decoded, CDATA sections as they are, comments dropped, in any
 * mix, appended to @p out (a string afterwards, "" when the text is empty).
 * @param[out] stop The end tag's '<' when 0 is returned.
 * @param[out] why When -1 is returned: what stopped it, a static phrase for a message.
 * @return 0, or -1 for an element or processing instruction, a reference xmlscan_read_ref() refuses,
 *         an unterminated comment or CDATA section, or the end of the text before an end tag.
 */
int xmlscan_read_text(const char *p, struct sbuf *out, const char **stop, const char **why);

#endif
