"""Talking to other processes on this machine: who serves a loopback port (`loopback`)."""
