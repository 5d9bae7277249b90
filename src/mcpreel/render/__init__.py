"""Rendering results for people: rich renderables on a terminal, plain lines when piped.

Rendering lives apart from the data it draws (:mod:`mcpreel.inspect` builds a report and never prints);
tests render into a string console.
"""
