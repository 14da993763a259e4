# label: hazard raises
# why: after truncation s is a view of the singular values that linalg.svd saved for its backward; renormalising it with s *= norm bumps their version, so backpropagating through the compressed factors raises
# source: https://github.com/jcmgray/symmray/pull/2 (truncated-SVD: "change in-place operation x*=y to x = x*y ... so that torch can do backpropagation")
import torch

torch.manual_seed(0)


def rdmul(x, d):
    return x * d.reshape(1, -1)


def ldmul(d, x):
    return d.reshape(-1, 1) * x


def svd_truncated(x, cutoff=-1.0, cutoff_mode=4, max_bond=-1, absorb=0, renorm=0):
    U, s, VH = torch.linalg.svd(x, full_matrices=False)

    if (cutoff > 0.0) or (renorm > 0):
        pow = 2 if cutoff_mode in (3, 4) else 1
        sp = s ** pow
        csp = torch.cumsum(sp, 0)
        tot = csp[-1]

    if cutoff > 0.0:
        if cutoff_mode in (4, 6):
            n_chi = int(torch.count_nonzero(csp < (1 - cutoff) * tot)) + 1
        else:
            n_chi = int(torch.count_nonzero((tot - csp) > cutoff)) + 1
        n_chi = max(n_chi, 1)
        if max_bond > 0:
            n_chi = min(n_chi, max_bond)
    elif max_bond > 0:
        # only maximum bond specified
        n_chi = max_bond
    else:
        n_chi = s.shape[0]

    if n_chi < s.shape[0]:
        s = s[:n_chi]
        U = U[:, :n_chi]
        VH = VH[:n_chi, :]

        if renorm > 0:
            norm = (tot / csp[n_chi - 1]) ** (1 / pow)
            s *= norm  # <-- IPL001: s is a view of the singular values saved by LinalgSvdBackward

    if absorb is None:
        return U, s, VH
    if absorb == -1:
        U = rdmul(U, s)
    elif absorb == 1:
        VH = ldmul(s, VH)
    else:
        s = torch.sqrt(s)
        U = rdmul(U, s)
        VH = ldmul(s, VH)
    return U, None, VH


# compress a two-site tensor of a small MPS-like network and fit it to a target
theta = torch.randn(6, 6, requires_grad=True)
target = torch.randn(6, 6)

left, _, right = svd_truncated(theta, max_bond=3, renorm=2)
approx = left @ right
loss = (approx - target).pow(2).sum()
loss.backward()
theta_grad = theta.grad.clone()
