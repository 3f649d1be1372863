# On EKS: the cluster may be created in the same configuration; its endpoint
# is unknown during plan, which is fine: planning creates needs no API call.
provider "flinkstate" {
  aws {
    region = "eu-west-1"
  }
  kubernetes {
    host                   = aws_eks_cluster.main.endpoint
    cluster_ca_certificate = base64decode(aws_eks_cluster.main.certificate_authority[0].data)
    exec {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", aws_eks_cluster.main.name]
    }
  }
}

# LocalStack and kind on a laptop.
provider "flinkstate" {
  alias = "local"
  aws {
    region                      = "us-east-1"
    endpoint                    = "http://localhost:4566"
    s3_use_path_style           = true
    skip_credentials_validation = true
  }
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "kind-kind"
  }
}

# The project's own test bed: `make testbed-up && . .testbed/env` sets
# AWS_ENDPOINT_URL, AWS_REGION, AWS keys and KUBECONFIG, so no block is needed.
provider "flinkstate" {
  alias = "testbed"
}
