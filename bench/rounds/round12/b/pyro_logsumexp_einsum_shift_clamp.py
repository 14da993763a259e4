# label: hazard raises
# why: when an operand keeps all its dims in the output, shift is just operand.detach(), so shift.clamp_ writes through the detach alias into the log-probabilities that log_softmax saved for backward
# source: https://github.com/pyro-ppl/pyro/commit/28bea004ce296c7b2093495c3e14b84fcd01b64c (reverts the clamp_ added in 9704fc8135cfc062f7574890e693db6abfffe63a)
import torch
import torch.nn.functional as F


class _SafeLog(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad / x.clamp(min=torch.finfo(x.dtype).eps)


def safe_log(x):
    return _SafeLog.apply(x)


def einsum(equation, *operands):
    """
    Log-sum-exp implementation of einsum.
    """
    symbols = sorted(set(equation) - set(',->'))
    rename = dict(zip(symbols, 'abcdefghijklmnopqrstuvwxyz'))
    equation = ''.join(rename.get(s, s) for s in equation)

    inputs, output = equation.split('->')
    if inputs == output:
        return operands[0][...]  # create a new object
    inputs = inputs.split(',')

    shifts = []
    exp_operands = []
    for dims, operand in zip(inputs, operands):
        shift = operand.detach()
        for i, dim in enumerate(dims):
            if dim not in output:
                shift = shift.max(i, keepdim=True)[0]
        # avoid nan due to -inf - -inf
        shift.clamp_(min=torch.finfo(shift.dtype).min)  # <-- IPL007, IPL001: shift can be operand.detach() itself, whose storage log_softmax saved for backward
        exp_operands.append((operand - shift).exp())

        # permute shift to match output
        shift = shift.reshape(torch.Size(size for size, dim in zip(operand.shape, dims)
                                         if dim in output))
        if shift.dim():
            shift = shift.reshape((1,) * (len(output) - shift.dim()) + shift.shape)
            dims = [dim for dim in dims if dim in output]
            dims = [dim for dim in output if dim not in dims] + dims
            shift = shift.permute(*(dims.index(dim) for dim in output))
        shifts.append(shift)

    result = safe_log(torch.einsum(equation, exp_operands))
    return sum(shifts + [result])


torch.manual_seed(0)
init_logits = torch.randn(3, requires_grad=True)
trans_logits = torch.randn(3, 3, requires_grad=True)

log_init = F.log_softmax(init_logits, -1)
log_trans = F.log_softmax(trans_logits, -1)
# joint log-probability of (x0, x1): operand "a" keeps its only dim in the output "ab"
log_joint = einsum("a,ab->ab", log_init, log_trans)
log_marginal = einsum("ab->b", log_joint)
loss = -log_marginal[1]
loss.backward()
