terraform {
  required_providers {
    flinkstate = {
      source  = "flinkstate/flinkstate"
      version = "~> 0.1"
    }
  }
}

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

# A CI runner assuming a deployment role, with tags on everything it creates,
# refusing to touch any other account; the cluster from a kubeconfig.
provider "flinkstate" {
  alias = "ci"
  aws {
    region              = "eu-west-1"
    allowed_account_ids = ["123456789012"]
    assume_role {
      role_arn     = "arn:aws:iam::123456789012:role/terraform-deploy"
      session_name = "ci"
    }
    default_tags {
      tags = { team = "data-platform", managed-by = "terraform" }
    }
  }
  kubernetes {
    config_paths   = ["~/.kube/config"]
    config_context = "prod"
  }
}
