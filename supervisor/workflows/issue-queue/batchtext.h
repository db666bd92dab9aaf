/*
 * batchtext.h: state.json's text made from kept pieces (batchtext.c):
 * the batch says which queue[] entry or issues{} member changed, a save
 * encodes only those again.
 */
#ifndef CCW_BATCHTEXT_H
#define CCW_BATCHTEXT_H

#include <stddef.h>

#include <jansson.h>

struct batch_text;

struct batch_text	*batchtext_new(void);
void			 batchtext_free(struct batch_text *);
void			 batchtext_item(struct batch_text *, size_t);	/* queue[i] changed */
void			 batchtext_issue(struct batch_text *, const char *);	/* issues[k] changed */
/* json_dumps(st, JSON_INDENT(2) | JSON_PRESERVE_ORDER)'s bytes, or NULL */
char			*batchtext_dump(struct batch_text *, const json_t *);
/* json_dumps(history, JSON_INDENT(2))'s bytes (it only grows at its end) */
char			*batchtext_history(struct batch_text *, const json_t *);

#endif
