"""Declarative rules shipped as package data (verifier._rules). Data only: schema mapping, units, analytes, tolerances."""
