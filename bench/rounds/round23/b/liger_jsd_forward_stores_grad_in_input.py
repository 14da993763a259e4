# label: hazard raises
# why: LigerJSDFunction.forward stores the gradient into the _input buffer to save memory, but _input is the student's log_softmax output that LogSoftmaxBackward saved, so the distillation loss cannot be backpropagated to the student logits.
# source: https://github.com/linkedin/Liger-Kernel/commit/33d8429bf9e832b591efd0836350a57512c5b95c
import torch
import torch.nn as nn

torch.manual_seed(0)


def _jsd_kernel(X, Y, loss, n_rows):
    # JSD(P || Q) = (KL(P || M) + KL(Q || M)) / 2, M = (1/2) * (P + Q)
    Q = torch.exp(X)
    P = torch.exp(Y)
    M = 0.5 * P + 0.5 * Q
    log_M = torch.log(M)
    loss.copy_(0.5 * (P * Y + Q * X - 2 * M * log_M))
    # gradients stored in X_ptr to save memory
    grad_X = 0.5 * Q * (X - log_M) / n_rows
    X.copy_(grad_X)  # <-- IPL005


def jsd_forward(_input, target):
    BT, V = _input.shape
    n_rows = BT
    # non reduction loss
    loss = torch.zeros(_input.shape, dtype=torch.float32, device=_input.device)
    _jsd_kernel(_input, target, loss, n_rows)
    # reduction == "batchmean"
    loss = torch.sum(loss) / n_rows
    return loss.to(_input.dtype), _input


def jsd_backward(_input, grad_output):
    # If JSD is the last layer, grad_output is 1.0. Skip the mul to save time
    if torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
        return _input
    return _input * grad_output


class LigerJSDFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input, target):
        loss, _input = jsd_forward(_input, target)
        ctx.save_for_backward(_input.detach())
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (_input,) = ctx.saved_tensors
        _input = jsd_backward(_input, grad_output)
        return _input, None


class LigerJSD(nn.Module):
    def forward(self, log_q, log_p):
        return LigerJSDFunction.apply(log_q, log_p)


def main():
    vocab, hidden, BT = 16, 8, 6
    student = nn.Linear(hidden, vocab)
    teacher = nn.Linear(hidden, vocab)
    x = torch.randn(BT, hidden)
    student_log_probs = torch.log_softmax(student(x), dim=-1)
    with torch.no_grad():
        teacher_log_probs = torch.log_softmax(teacher(x), dim=-1)
    loss = LigerJSD()(student_log_probs, teacher_log_probs)
    loss.backward()
    return loss.detach(), student.weight.grad.clone()


loss, grad = main()
