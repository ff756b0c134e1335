"""`dagmem view`: a home drawn as one self-contained HTML page (inline CSS, JS and SVG; no network).

It only reads the home. Each session's DAG is drawn with its nodes coloured by state for this workspace
(written, owed, stranded, not a record), its head, tips and forks, long linear runs collapsed; a click shows
a node's text, its archive frame and the topic blocks citing it; the topics, the core block and the
writer's status are on the page too."""

from __future__ import annotations

from .._lazy import eager
from ._layout import MIN_RUN as MIN_RUN
from ._layout import Item as Item
from ._layout import Layout as Layout
from ._layout import layout as layout
from ._page import PageStats as PageStats
from ._page import plain_claim as plain_claim
from ._page import render_page as render_page
from ._read import HomeView as HomeView
from ._read import SessionView as SessionView
from ._read import TopicView as TopicView
from ._read import read_home as read_home

eager(globals())
