"""Airflow imports this module in each of its processes (``airflow_local_settings``, found on PYTHONPATH,
which ``jobs.airflow_home.environment`` extends with this folder): the log servers of the scheduler and the
triggerer bind ``[logging] worker_log_server_host`` (127.0.0.1 by default) instead of every interface."""

from jobs.airflow_home import bind_log_servers

__all__: list[str] = []  # Airflow copies every public name of this module into airflow.settings

bind_log_servers()
