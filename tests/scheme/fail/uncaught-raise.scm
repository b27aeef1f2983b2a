(raise 'some-symbol)
