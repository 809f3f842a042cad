# A Python package built into a wheel, uploaded to a volume and run by a job: the
# databricks_artifact builds it again only when one of its inputs changes, and the job's
# environment takes the uploaded wheel's path. See README.md.
#
#   brickform -C examples/wheel-job apply --local --auto-approve

provider "databricks" {
  host = "local"
}

variable "catalog" {
  type    = string
  default = "wheel_job"
}

resource "databricks_catalog" "main" {
  name          = var.catalog
  force_destroy = true
}

resource "databricks_schema" "libs" {
  catalog_name  = databricks_catalog.main.name
  name          = "libs"
  force_destroy = true
}

resource "databricks_volume" "wheels" {
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.libs.name
  name         = "wheels"
  volume_type  = "MANAGED"
}

# Built with the Python that is first on PATH (it needs the `build` and `wheel` packages);
# --no-isolation builds with what that Python has, without downloading a build backend.
resource "databricks_artifact" "greeter" {
  source_dir = "greeter"
  build      = ["python", "-m", "build", "--wheel", "--no-isolation", "--outdir", "dist"]
  inputs     = ["pyproject.toml", "src/**/*.py"]
  output     = "dist/greeter-*.whl"
  path       = "${databricks_volume.wheels.volume_path}/greeter"
}

resource "databricks_job" "greet" {
  name = "${var.catalog}-greet"

  environment {
    environment_key = "greeter"
    spec {
      client       = "1"
      dependencies = [databricks_artifact.greeter.remote_path]
    }
  }

  task {
    task_key        = "greet"
    environment_key = "greeter"
    python_wheel_task {
      package_name = "greeter"
      entry_point  = "greet"
      parameters   = ["--name", "brickform"]
    }
  }
}

output "wheel" {
  value = databricks_artifact.greeter.remote_path
}
