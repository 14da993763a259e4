# label: hazard raises no-twin
# why: h_next is carried into the next iteration with its graph, and opt.step() updates the RNN weights in place after each backward(retain_graph=True), so the next backward reaches the previous step's saved weights at a newer version.
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
        rnn_loss.backward(retain_graph=True)
        opt.step()  # <-- IPL001
        outputs.append(train_output.detach())
        h_cur = h_next
    return torch.cat(outputs)


result = main()
