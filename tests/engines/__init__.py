"""Tests of the Spark, Ray and Daft engines against the local one."""
