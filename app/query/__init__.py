"""Queries: the query language (lexer, parser, type checker, compiler to SQL over `events`; GRAMMAR.md), and
POST /v1/query and /v1/export running it on the query pool."""
