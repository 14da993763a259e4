# label: hazard raises no-twin
# why: the hidden state h_next carries the previous step's graph into the next loss, and opt.step() updates the RNN weights in place in between, so the second backward walks into a graph whose saved weights changed.
# source: http://developer.aliyun.com/article/1467534
import torch

torch.manual_seed(0)

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
    opt.step()  # <-- IPL001: updates weights that the graph kept alive through h_next still needs
    outputs.append(train_output)
    h_cur = h_next
