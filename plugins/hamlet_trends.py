"""The project's Airflow plugin: the API server serves the Data Docs and reports the tasks link to. The code is
in jobs/airflow_plugin.py; this folder is AIRFLOW__CORE__PLUGINS_FOLDER (jobs.airflow_home)."""

from jobs.airflow_plugin import HamletPlugin

__all__ = ["HamletPlugin"]
