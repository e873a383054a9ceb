"""World(views=False): a conforming Client keeps no view; a faulty view is still kept and judged."""

from __future__ import annotations

from model.clientview import ClientView
from simulator.explore import random_walks as explore_random
from simulator.peers.client import BlindView
from simulator.peers.config import DEFAULT
from simulator.peers.world import World


def test_a_conforming_client_keeps_no_view_when_asked() -> None:
    assert isinstance(World(DEFAULT).client.view, ClientView)
    blind = World(DEFAULT, views=False)
    assert isinstance(blind.client.view, BlindView)
    assert blind.client.view.to_json() == {} and blind.reference is None


def test_a_faulty_view_is_kept_and_compared_even_without_views() -> None:
    world = World(DEFAULT, frozenset({"unknown-state-is-idle"}), views=False)
    assert isinstance(world.client.view, ClientView) and world.reference is not None
    fault = frozenset({"unknown-state-is-idle"})
    assert any(  # the faulty view disagrees with the reference view somewhere
        b.source == "view"
        for seed in range(40)
        for b in explore_random.walk(seed, 60, DEFAULT, fault).breaches
    )
