# label: hazard silent
# why: without categoricals construct_input_vector aliases x_cont and rolls the target column inside it, so encode shifts x["encoder_cont"] in place and decode then reads an already-shifted last target as its one-off input
# source: https://github.com/sktime/pytorch-forecasting/pull/732
import torch
import torch.nn as nn

torch.manual_seed(0)


class DeepARLite(nn.Module):
    def __init__(self, reals=("target", "price"), target_positions=(0,), hidden_size=8):
        super().__init__()
        self.reals = list(reals)
        self.categoricals = []
        self.target_positions = torch.tensor(target_positions)
        self.rnn = nn.LSTM(input_size=len(self.reals), hidden_size=hidden_size, batch_first=True)
        self.distribution_projector = nn.Linear(hidden_size, 2)

    def construct_input_vector(self, x_cat, x_cont, one_off_target=None):
        # create input vector
        if len(self.categoricals) > 0:
            input_vector = x_cat.float()
        if len(self.reals) > 0:
            input_vector = x_cont
        # shift target by one
        input_vector[..., self.target_positions] = torch.roll(  # <-- IPL004, IPL002: input_vector is the caller's x_cont; the roll is written back into x["encoder_cont"]
            input_vector[..., self.target_positions], shifts=1, dims=1
        )
        if one_off_target is not None:  # set first target input (which is rolled over)
            input_vector[:, 0, self.target_positions] = one_off_target
        else:
            input_vector = input_vector[:, 1:]
        return input_vector

    def encode(self, x):
        input_vector = self.construct_input_vector(x["encoder_cat"], x["encoder_cont"])
        _, hidden_state = self.rnn(input_vector)
        return hidden_state

    def decode(self, input_vector, hidden_state):
        output, _ = self.rnn(input_vector, hidden_state)
        return self.distribution_projector(output)

    def forward(self, x):
        hidden_state = self.encode(x)
        # decode
        input_vector = self.construct_input_vector(
            x["decoder_cat"],
            x["decoder_cont"],
            one_off_target=x["encoder_cont"][:, -1, self.target_positions].reshape(-1, 1),
        )
        output = self.decode(input_vector, hidden_state)
        return dict(prediction=output)


model = DeepARLite()
x = {
    "encoder_cat": torch.zeros(3, 6, 0, dtype=torch.long),
    "encoder_cont": torch.randn(3, 6, 2),
    "decoder_cat": torch.zeros(3, 4, 0, dtype=torch.long),
    "decoder_cont": torch.randn(3, 4, 2),
}
target = torch.randn(3, 4)
out = model(x)
loc, log_scale = out["prediction"][..., 0], out["prediction"][..., 1]
loss = -torch.distributions.Normal(loc, log_scale.exp()).log_prob(target).mean()
loss.backward()
encoder_cont_after = x["encoder_cont"]
