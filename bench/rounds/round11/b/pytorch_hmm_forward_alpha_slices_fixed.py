# label: safe
# why: the forward algorithm writes each time step into a preallocated log_alpha buffer, but every op that reads a previous slice (reshape, add, logsumexp) saves only fresh tensors, so the slice writes do not clobber anything autograd needs.
# source: https://github.com/lorenlugosch/pytorch_HMM/issues/1
import torch

torch.manual_seed(0)


def log_domain_matmul(log_A, log_B):
    """
    log_A : m x n
    log_B : n x p
    output : m x p matrix; normal_matmul(A,B) = exp(log_domain_matmul(log(A),log(B)))
    """
    m = log_A.shape[0]
    n = log_A.shape[1]
    p = log_B.shape[1]
    log_A_expanded = torch.reshape(log_A, (m, n, 1))
    log_B_expanded = torch.reshape(log_B, (1, n, p))
    elementwise_sum = log_A_expanded + log_B_expanded
    out = torch.logsumexp(elementwise_sum, dim=1)
    return out


class TransitionModel(torch.nn.Module):
    def __init__(self, N):
        super().__init__()
        self.N = N
        self.unnormalized_transition_matrix = torch.nn.Parameter(torch.randn(N, N))

    def forward(self, log_alpha):
        log_transition_matrix = torch.nn.functional.log_softmax(self.unnormalized_transition_matrix, dim=0)
        out = log_domain_matmul(log_transition_matrix, log_alpha.transpose(0, 1)).transpose(0, 1)
        return out


class EmissionModel(torch.nn.Module):
    def __init__(self, N, M):
        super().__init__()
        self.unnormalized_emission_matrix = torch.nn.Parameter(torch.randn(N, M))

    def forward(self, x_t):
        log_emission_matrix = torch.nn.functional.log_softmax(self.unnormalized_emission_matrix, dim=1)
        out = log_emission_matrix[:, x_t].transpose(0, 1)
        return out


class HMM(torch.nn.Module):
    def __init__(self, M, N):
        super().__init__()
        self.M = M
        self.N = N
        self.transition_model = TransitionModel(self.N)
        self.emission_model = EmissionModel(self.N, self.M)
        self.unnormalized_state_priors = torch.nn.Parameter(torch.randn(self.N))

    def forward(self, x, T):
        batch_size = x.shape[0]
        T_max = x.shape[1]
        log_state_priors = torch.nn.functional.log_softmax(self.unnormalized_state_priors, dim=0)
        log_alpha = torch.zeros(batch_size, T_max, self.N)
        log_alpha[:, 0, :] = self.emission_model(x[:, 0]) + log_state_priors
        for t in range(1, T_max):
            log_alpha[:, t, :] = self.emission_model(x[:, t]) + self.transition_model(log_alpha[:, t - 1, :])
        log_sums = log_alpha.logsumexp(dim=2)
        log_probs = torch.gather(log_sums, 1, T.view(-1, 1) - 1)
        return log_probs


model = HMM(M=5, N=3)
x = torch.randint(0, 5, (2, 6))
T = torch.tensor([6, 4])
log_probs = model(x, T)
loss = -log_probs.mean()
loss.backward()
