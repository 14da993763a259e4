# label: safe
# why: the hidden state is detached before it is fed to the next step, so each backward only reaches weights used in its own step, which opt.step() has not yet modified.
# source: https://e-com-net.com/article/1641037187019497472.htm
import torch

torch.manual_seed(0)


def main():
    rnn = torch.nn.RNN(input_size=1, hidden_size=1, num_layers=1)
    train_set_x = torch.tensor([[[1]], [[2]], [[3]], [[4]], [[5]]], dtype=torch.float32)
    train_set_y = torch.tensor([[[2]], [[4]], [[6]], [[8]], [[10]]], dtype=torch.float32)
    h0 = torch.tensor([[0]], dtype=torch.float32)
    h_cur = h0
    loss = torch.nn.MSELoss()
    opt = torch.optim.Adadelta(rnn.parameters(), lr=0.01)
    outputs = []
    for i in range(5):
        opt.zero_grad()
        train_output, h_next = rnn(train_set_x[i], h_cur)
        rnn_loss = loss(train_output, train_set_y[i])
        rnn_loss.backward()
        opt.step()
        outputs.append(train_output.detach())
        h_cur = h_next.detach()
    return torch.cat(outputs)


result = main()
